// The `github` tracker adapter: GitHub Issues over REST (github.com, or GitHub Enterprise
// through tracker.endpoint `https://<host>/api/v3`), for the one repository tracker.repository
// names. How it reads GitHub:
// - state: a label `<state_label_prefix><state>` (default `lorenz:`) names it, matched
//   case-insensitively against active_states and terminal_states (an unknown name is kept
//   as written, so `lorenz:review` parks an issue). Open without one: the first active
//   state. Closed: a terminal state label if any, else the first terminal state; an active
//   label left on a closed issue is ignored, so closing always stops the work. With several
//   state labels a terminal one wins.
// - id is the issue number (`42`), identifier `owner/name#42`; fetchByIds also takes `#42`
//   and `owner/name#42`. Pull requests, which the issues API lists too, are skipped.
// - labels are lower-cased, state labels left out (they are the state); priority comes from
//   `priority:1` … `priority:4` (the most urgent if several), else null.
// - blocked_by is always empty: blockers would cost a request per issue
//   (issues/{n}/dependencies/blocked_by), which a poll of pages cannot afford.
// - Every answer's ETag is remembered per URL and token (shared across adapters, since the
//   controller builds one per poll), so an unchanged poll is all 304s and costs no rate limit.
// - writer (the agent tools): comments, comment edits (only a comment whose issue_url is the
//   given issue), state changes as one PATCH of labels and open/closed, new issues. Writes
//   need no cache invalidation: a changed resource no longer matches its old ETag.
export { type GithubTrackerOptions, createGithubTracker, issueNumberOf } from './adapter.js';
export { EtagCache, SHARED_ETAG_CACHE } from './cache.js';
export { GITHUB_MAX_PAGES, GITHUB_PAGE_SIZE, nextLink } from './pages.js';
export {
  GITHUB_API_VERSION,
  GITHUB_DEFAULT_ENDPOINT,
  GITHUB_TOKEN_VARIABLE,
  type GithubTrackerConfig,
  resolveGithubToken,
} from './settings.js';
export { GITHUB_REQUEST_TIMEOUT_MS, GITHUB_SECONDARY_WAIT_MS } from './transport.js';
