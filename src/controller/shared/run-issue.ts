import type { IssueRun } from '../../api/index.js';
import { normalizeIssue, type Issue } from '../../workflow/issue.js';

/**
 * Normalized issues by the cached spec.issue object they came from. A run's start asks for its
 * issue three times (its slots, its branch, its inputs) and zod's parse each time was a
 * measurable part of a burst's CPU. Keyed weakly by the object the informer holds: a changed
 * run is a new object, parsed again; a run gone from the cache takes its entry with it.
 * Callers only read the issue.
 */
const normalized = new WeakMap<object, Issue>();

/** The run's issue, normalized; throws `invalid_issue` naming spec.issue as normalizeIssue does. */
export function runIssue(run: IssueRun): Issue {
  const raw: unknown = run.spec.issue;
  const key = typeof raw === 'object' && raw !== null ? raw : undefined;
  const known = key && normalized.get(key);
  if (known) return known;
  const issue = normalizeIssue(raw, 'spec.issue');
  if (key) normalized.set(key, issue);
  return issue;
}
