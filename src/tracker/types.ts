import type { Issue } from '../workflow/issue.js';

/**
 * What every tracker adapter offers the orchestrator (facts.md, "Trackers"): the issues to
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
}

export interface FetchOptions {
  signal?: AbortSignal;
}

/** How an adapter reaches the network: injectable, so tests point it at a local stand-in. */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;
