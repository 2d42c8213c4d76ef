// Tracker issues as the dispatch tests need them: only the identifier and what the test is
// about are chosen, the rest follows from the identifier.
import { normalizeIssue, type Issue, type IssueInput } from '../../../src/workflow/issue.js';

/** A Todo issue whose id (`id-<identifier>`) and title come from its identifier. */
export const todoIssue = (identifier: string, fields: Partial<IssueInput> = {}): Issue =>
  normalizeIssue({
    id: `id-${identifier}`,
    identifier,
    title: identifier,
    state: 'Todo',
    ...fields,
  });
