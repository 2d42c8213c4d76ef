import type { FetchLike, FetchOptions } from '../tracker/types.js';

/**
 * What every code host offers the review loop (docs/review-loop.md): the pull request of an
 * issue branch (found or opened), and what people and CI said about it. Used by the
 * controller only; nothing here ever runs in a run Pod. Every read that can be conditional
 * (ETag / If-None-Match) is, so an idle pull request costs no rate limit. Failures throw
 * LorenzError with the codehost codes (`codehost_request`, `codehost_status`,
 * `codehost_response`, `codehost_rate_limited`, `invalid_codehost_config`); the token never
 * appears in any text.
 */
export interface CodeHost {
  /** `github` or `gitlab`. */
  readonly kind: CodeHostKind;
  /** The repository as the host names it: `owner/name`, or GitLab's `group/sub/project`. */
  readonly repository: string;
  /** The login (GitHub) or username (GitLab) the token acts as; its comments never start a round. */
  identity(options?: FetchOptions): Promise<string | null>;
  /** The repository's default branch. */
  defaultBranch(options?: FetchOptions): Promise<string>;
  /**
   * How far `head` is ahead of `base` on the remote; null when the head branch does not exist
   * there (nothing was pushed).
   */
  compareBranches(
    base: string,
    head: string,
    options?: FetchOptions,
  ): Promise<BranchComparison | null>;
  /** The open pull (merge) request whose head is this branch, if any. */
  findOpenPullRequest(head: string, options?: FetchOptions): Promise<PullRequest | null>;
  /** Opens a pull (merge) request; GitLab marks a draft with the `Draft:` title prefix. */
  openPullRequest(input: NewPullRequest, options?: FetchOptions): Promise<PullRequest>;
  /** The pull request as it is now. */
  getPullRequest(number: number, options?: FetchOptions): Promise<PullRequest>;
  /** Takes a draft out of draft. */
  markReady(pull: PullRequest, options?: FetchOptions): Promise<PullRequest>;
  /** Reviews and comments on the pull request, oldest first. */
  feedback(pull: PullRequest, options?: FetchOptions): Promise<PullRequestFeedback>;
  /** The checks (check runs, commit statuses, pipeline jobs) on a commit. */
  checks(sha: string, options?: FetchOptions): Promise<CheckResult[]>;
}

export type CodeHostKind = 'github' | 'gitlab';

export interface BranchComparison {
  /** Commits on head that base does not have. */
  aheadBy: number;
  /** The head branch's commit. */
  headSha: string;
}

export interface NewPullRequest {
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
}

export type PullRequestState = 'open' | 'closed' | 'merged';

export interface PullRequest {
  /** GitHub's pull number; GitLab's merge request iid. */
  number: number;
  url: string;
  state: PullRequestState;
  draft: boolean;
  title: string;
  headBranch: string;
  headSha: string;
  baseBranch: string;
}

/** The overall verdict of the reviews: the latest review of each reviewer, combined. */
export type ReviewState = 'approved' | 'changes_requested' | 'commented' | 'none';

export interface Review {
  id: string;
  author: string | null;
  /** `approved`, `changes_requested` or `commented` (GitHub's DISMISSED/PENDING are left out). */
  state: Exclude<ReviewState, 'none'>;
  body: string;
  submittedAt: string | null;
  /** The head commit the review was given on, where the host says. */
  commitSha: string | null;
}

export interface ReviewComment {
  id: string;
  /** The file the comment is on; null for a comment on the whole pull request. */
  path: string | null;
  line: number | null;
  author: string | null;
  body: string;
  createdAt: string | null;
}

export interface PullRequestFeedback {
  reviews: Review[];
  comments: ReviewComment[];
  /** The combined verdict (latest review per author; any changes_requested wins). */
  state: ReviewState;
}

export type CheckStatus = 'queued' | 'in_progress' | 'completed';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  /** For a completed check: `success`, `failure`, `cancelled`, `timed_out`, `skipped`, `neutral`, … */
  conclusion: string | null;
  /** The end of its output where the host gives it (a check run's summary/text, a job trace). */
  outputTail: string | null;
  url: string | null;
}

/** Where and how to reach a code host: the settings every implementation takes. */
export interface CodeHostOptions {
  kind: CodeHostKind;
  /** API root, e.g. https://api.github.com, https://ghe.example/api/v3, https://gitlab.example/api/v4. */
  apiUrl: string;
  repository: string;
  token: string;
  fetch?: FetchLike;
  /** Told of a problem worth a log line that is not a failure (a malformed item dropped). */
  onWarning?: (message: string) => void;
}
