import type { Issue } from '../workflow/issue.js';

/**
 * What every tracker adapter offers the orchestrator (docs/design.md#trackers): the issues to
 * consider, the issues it is running (to reconcile them), and the issues in given states
 * (terminal ones, to clean their workspaces at start-up). Every issue comes back normalized
 * (src/workflow/issue.ts); an item that cannot be normalized is dropped, never half-filled.
 * Failures throw LorenzError with the tracker codes of src/workflow/errors.ts
 * (`tracker_request`, `tracker_status`, `tracker_response`, `tracker_pagination`,
 * `tracker_rate_limited`, `invalid_tracker_config`, `missing_tracker_secret`).
 */
export interface TrackerAdapter {
  /** The adapter's kind: `memory`, `local`, `linear`, `github`, `jira`. */
  readonly kind: string;
  /** Issues in the active states, in the tracker's scope (project, repository, assignee). */
  fetchCandidates(options?: FetchOptions): Promise<Issue[]>;
  /** These issues as they are now; ids the tracker no longer has are left out. */
  fetchByIds(ids: readonly string[], options?: FetchOptions): Promise<Issue[]>;
  /** Issues in any of these states, in the tracker's scope. */
  fetchByStates(states: readonly string[], options?: FetchOptions): Promise<Issue[]>;
  /** What the adapter can change on the tracker (the agent tools), when it can. */
  readonly writer?: TrackerWriter;
}

export interface TrackerComment {
  id: string;
  body: string;
  /** The author's display name or login, as the tracker shows it. */
  author: string | null;
  /** The author's stable id on the tracker (Linear user id, GitHub user id, Jira accountId). */
  author_id?: string | null;
  /** The author's email, when the tracker gives it. */
  author_email?: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export interface NewIssue {
  title: string;
  description?: string | null;
  state?: string | null;
}

/**
 * Writes and reads for the agent tools. Every issue id is the normalized Issue.id (as
 * fetchByIds takes it). The gateway scopes calls to the run's own issue; this layer only
 * talks to the tracker. Failures throw LorenzError with the tracker codes; the key never
 * appears in any text.
 */
export interface TrackerWriter {
  readIssue(issueId: string, options?: FetchOptions): Promise<Issue | null>;
  listComments(issueId: string, options?: FetchOptions): Promise<TrackerComment[]>;
  comment(issueId: string, body: string, options?: FetchOptions): Promise<TrackerComment>;
  updateComment(
    issueId: string,
    commentId: string,
    body: string,
    options?: FetchOptions,
  ): Promise<TrackerComment>;
  /** Moves the issue to the state of that name (matched trimmed, case-insensitively). */
  updateState(issueId: string, state: string, options?: FetchOptions): Promise<Issue>;
  createIssue?(input: NewIssue, options?: FetchOptions): Promise<Issue>;
  /**
   * One raw GraphQL operation with the tracker's key (Linear only; the `linear_graphql` tool
   * when a Workflow opts in). Returns the answer's `data`.
   */
  graphql?(
    query: string,
    variables: Record<string, unknown>,
    options?: FetchOptions,
  ): Promise<unknown>;
}

export interface FetchOptions {
  signal?: AbortSignal;
}

/** How an adapter reaches the network: injectable, so tests point it at a local stand-in. */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;
