import type { Issue, IssueInput } from '../../workflow/issue.js';
import { normalizedOrNull } from '../issue-list.js';
import { isJsonMap } from './transport.js';

/** What normalizing needs beyond the item: the repository and the state names. */
export interface StateContext {
  /** `owner/name`, as the identifier's prefix. */
  repository: string;
  /** Lower-cased. */
  labelPrefix: string;
  activeStates: readonly string[];
  terminalStates: readonly string[];
  /** The configured assignee filter (a login), or null. */
  assignee: string | null;
}

const PRIORITY_LABEL = /^priority:\s*([1-4])$/;

const key = (state: string): string => state.trim().toLowerCase();

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Label names; GitHub gives objects, older answers and the schema also allow bare strings. */
function labelNames(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  return value
    .map((label) =>
      typeof label === 'string' ? label : isJsonMap(label) ? text(label.name) : null,
    )
    .filter((name): name is string => name !== null && name.trim() !== '')
    .map((name) => name.trim().toLowerCase());
}

/** The configured state a label suffix names, spelled as configured; else the suffix itself. */
function configuredName(suffix: string, context: StateContext): string {
  const all = [...context.terminalStates, ...context.activeStates];
  return all.find((state) => key(state) === key(suffix)) ?? suffix.trim();
}

const isTerminal = (state: string, context: StateContext): boolean =>
  context.terminalStates.some((terminal) => key(terminal) === key(state));

/**
 * The Lorenz state of an issue from GitHub's open/closed and its state labels. Several state
 * labels: a terminal one wins (the safe reading: work stops). A closed issue is terminal
 * whatever its labels say otherwise: closing is the user's last word, and a stale
 * `lorenz:in progress` left on it must not keep a run going; a label naming another terminal
 * state (`lorenz:duplicate`) is honoured. Null when no state can be named (no states
 * configured).
 */
export function stateOf(open: boolean, stateLabels: readonly string[], context: StateContext) {
  const named = stateLabels.map((suffix) => configuredName(suffix, context));
  const terminal = named.find((state) => isTerminal(state, context));
  if (!open) return terminal ?? context.terminalStates[0] ?? null;
  return terminal ?? named[0] ?? context.activeStates[0] ?? null;
}

/** `priority:1` … `priority:4` (1 most urgent, as Linear counts); the most urgent wins. */
export function priorityOf(labels: readonly string[]): number | null {
  const found = labels
    .map((label) => PRIORITY_LABEL.exec(label)?.[1])
    .filter((digit): digit is string => digit !== undefined)
    .map(Number);
  return found.length > 0 ? Math.min(...found) : null;
}

function assigneeLogins(item: Record<string, unknown>): string[] {
  const all = Array.isArray(item.assignees) ? item.assignees : [item.assignee];
  return all
    .map((user) => (isJsonMap(user) ? text(user.login) : null))
    .filter((login): login is string => login !== null);
}

/**
 * One item of GitHub's issue list as a normalized issue, or null: pull requests (the issues
 * API lists them too) and items missing what an issue must have (a positive number, a title,
 * open/closed, a label list) are dropped, never half-filled. `id` is the issue number, which
 * is what GET /repos/{owner}/{repo}/issues/{number} takes back; state labels are left out of
 * `labels` (they are the state, and would go stale in a run's copy when the state moves on).
 */
export function normalizeGithubIssue(item: unknown, context: StateContext): Issue | null {
  if (!isJsonMap(item) || item.pull_request != null) return null;
  const number = item.number;
  const title = text(item.title);
  const labels = labelNames(item.labels);
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 1) return null;
  if (title === null || labels === null) return null;
  if (item.state !== 'open' && item.state !== 'closed') return null;
  const stateLabels = labels
    .filter((label) => label.startsWith(context.labelPrefix))
    .map((label) => label.slice(context.labelPrefix.length))
    .filter((suffix) => suffix.trim() !== '');
  const state = stateOf(item.state === 'open', stateLabels, context);
  if (state === null) return null;
  const logins = assigneeLogins(item);
  const wanted = context.assignee;
  const input: IssueInput = {
    id: String(number),
    identifier: `${context.repository}#${number}`,
    title,
    description: text(item.body),
    priority: priorityOf(labels),
    state,
    // GitHub has no state types; the dispatch policy then reads the first active state as
    // "not started".
    state_type: null,
    branch_name: null,
    url: text(item.html_url),
    assignee_id: logins[0] ?? null,
    blocked_by: [],
    labels: labels.filter((label) => !label.startsWith(context.labelPrefix)),
    assigned_to_worker:
      wanted === null || wanted === '*' || wanted.toLowerCase() === 'none'
        ? true
        : logins.some((login) => login.toLowerCase() === wanted.toLowerCase()),
    created_at: text(item.created_at),
    updated_at: text(item.updated_at),
  };
  return normalizedOrNull(input, `github issue ${context.repository}#${number}`);
}
