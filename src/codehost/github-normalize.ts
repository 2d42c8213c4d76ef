// GitHub's REST answers read into the code host's types. Each reader takes untyped JSON and
// returns the typed value or null for an item that is not what GitHub documents; the caller
// decides whether a missing item is a failure (a pull request) or a warning (one comment).
import { isJsonMap } from '../tracker/github/transport.js';
import type {
  CheckResult,
  CheckStatus,
  PullRequest,
  Review,
  ReviewComment,
  ReviewState,
} from './types.js';

/** A check's output is quoted into a prompt; its end says what failed, its start rarely. */
export const OUTPUT_TAIL_CHARS = 2000;

type Json = Record<string, unknown>;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const count = (value: unknown): number | null =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
const login = (user: unknown): string | null => (isJsonMap(user) ? text(user.login) : null);
const map = (value: unknown): Json => (isJsonMap(value) ? value : {});

/** The last `OUTPUT_TAIL_CHARS` characters, or null for nothing worth quoting. */
export function tail(value: string | null): string | null {
  if (value === null || value.trim() === '') return null;
  return value.length > OUTPUT_TAIL_CHARS ? value.slice(-OUTPUT_TAIL_CHARS) : value;
}

/** A pull request (the full or the list form); merged is a state of its own here. */
export function readPullRequest(value: unknown): PullRequest | null {
  if (!isJsonMap(value)) return null;
  const number = count(value.number);
  const url = text(value.html_url);
  const title = text(value.title);
  const head = map(value.head);
  const base = map(value.base);
  const headBranch = text(head.ref);
  const headSha = text(head.sha);
  const baseBranch = text(base.ref);
  if (value.state !== 'open' && value.state !== 'closed') return null;
  if (number === null || url === null || title === null) return null;
  if (headBranch === null || headSha === null || baseBranch === null) return null;
  // The list form has no `merged`; both forms have `merged_at`.
  const merged = value.merged === true || (typeof value.merged_at === 'string' && value.merged_at);
  return {
    number,
    url,
    state: merged ? 'merged' : value.state,
    draft: value.draft === true,
    title,
    headBranch,
    headSha,
    baseBranch,
  };
}

const REVIEW_STATES: Record<string, Review['state']> = {
  APPROVED: 'approved',
  CHANGES_REQUESTED: 'changes_requested',
  COMMENTED: 'commented',
};

/** A submitted review; DISMISSED and PENDING (an unsent draft) read as null, left out. */
export function readReview(value: unknown): Review | null {
  if (!isJsonMap(value)) return null;
  const state = REVIEW_STATES[text(value.state) ?? ''];
  const id = count(value.id);
  if (state === undefined || id === null) return null;
  return {
    id: String(id),
    author: login(value.user),
    state,
    body: text(value.body) ?? '',
    submittedAt: text(value.submitted_at),
    commitSha: text(value.commit_id),
  };
}

/**
 * The verdict of the reviews, given oldest first: the latest review of each author stands
 * for that author; any changes_requested among them wins, else approved, else commented.
 */
export function combineReviews(reviews: readonly Review[]): ReviewState {
  const latest = new Map<string, Review>();
  // A review without an author (a deleted account) is its own reviewer.
  for (const review of reviews) latest.set(review.author ?? `#${review.id}`, review);
  const states = new Set([...latest.values()].map((review) => review.state));
  if (states.has('changes_requested')) return 'changes_requested';
  if (states.has('approved')) return 'approved';
  if (states.has('commented')) return 'commented';
  return 'none';
}

/** A review comment (on a line of a file); an outdated one keeps the line it was given on. */
export function readReviewComment(value: unknown): ReviewComment | null {
  if (!isJsonMap(value)) return null;
  const id = count(value.id);
  const path = text(value.path);
  const body = text(value.body);
  if (id === null || path === null || body === null) return null;
  return {
    id: String(id),
    path,
    line: count(value.line) ?? count(value.original_line),
    author: login(value.user),
    body,
    createdAt: text(value.created_at),
  };
}

/** A conversation comment: on the whole pull request, so no path and no line. */
export function readIssueComment(value: unknown): ReviewComment | null {
  if (!isJsonMap(value)) return null;
  const id = count(value.id);
  const body = text(value.body);
  if (id === null || body === null) return null;
  return {
    id: String(id),
    path: null,
    line: null,
    author: login(value.user),
    body,
    createdAt: text(value.created_at),
  };
}

/** Oldest first; comments without a time keep their place after those with one. */
export function byCreation(comments: readonly ReviewComment[]): ReviewComment[] {
  const at = (comment: ReviewComment) =>
    comment.createdAt === null ? Infinity : Date.parse(comment.createdAt) || Infinity;
  return [...comments].sort((a, b) => at(a) - at(b));
}

// GitHub Actions adds `waiting`, `requested` and `pending`: none of them has started.
const CHECK_STATUSES: Record<string, CheckStatus> = {
  queued: 'queued',
  waiting: 'queued',
  requested: 'queued',
  pending: 'queued',
  in_progress: 'in_progress',
  completed: 'completed',
};

/** A check run, its output's summary and text joined and cut to their tail. */
export function readCheckRun(value: unknown): CheckResult | null {
  if (!isJsonMap(value)) return null;
  const name = text(value.name);
  const status = CHECK_STATUSES[text(value.status) ?? ''];
  if (name === null || status === undefined) return null;
  const output = map(value.output);
  const parts = [text(output.summary), text(output.text)].filter(
    (part): part is string => part !== null && part.trim() !== '',
  );
  return {
    name,
    status,
    conclusion: status === 'completed' ? text(value.conclusion) : null,
    outputTail: tail(parts.length === 0 ? null : parts.join('\n\n')),
    url: text(value.html_url) ?? text(value.details_url),
  };
}

const STATUS_STATES = new Set(['pending', 'success', 'failure', 'error']);

/**
 * A commit status (the older API many CI services still use): `pending` has not finished;
 * `success`, `failure` and `error` are its conclusion as they are.
 */
export function readCommitStatus(value: unknown): CheckResult | null {
  if (!isJsonMap(value)) return null;
  const name = text(value.context);
  const state = text(value.state);
  if (name === null || state === null || !STATUS_STATES.has(state)) return null;
  return {
    name,
    status: state === 'pending' ? 'in_progress' : 'completed',
    conclusion: state === 'pending' ? null : state,
    outputTail: tail(text(value.description)),
    url: text(value.target_url),
  };
}
