// Pull request, review, comment, check and status objects for the GitHub stand-in's code-host
// routes, built from the examples GitHub's OpenAPI description documents for each operation,
// with only numbers, names, states and dates changed: the answers have GitHub's shape, and the
// stand-in checks them against the schemas on the way out all the same.
import { createHash } from 'node:crypto';
import { documentedExample } from './github-openapi.js';

type Json = Record<string, unknown>;

export interface FakePull {
  number: number;
  title: string;
  body: string;
  head: string;
  headSha: string;
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  author: string;
  createdAt: string;
  updatedAt: string;
}

export interface FakeReview {
  id: number;
  pull: number;
  author: string | null;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED' | 'PENDING';
  body: string;
  commitSha: string;
  submittedAt: string;
}

export interface FakeReviewComment {
  id: number;
  pull: number;
  author: string | null;
  body: string;
  path: string;
  /** null for an outdated comment (GitHub keeps `original_line`). */
  line: number | null;
  originalLine: number;
  commitSha: string;
  createdAt: string;
}

export interface FakePullComment {
  id: number;
  pull: number;
  author: string | null;
  body: string;
  createdAt: string;
}

export interface FakeCheckRun {
  id: number;
  sha: string;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  summary: string | null;
  text: string | null;
}

export interface FakeStatus {
  id: number;
  sha: string;
  context: string;
  state: 'pending' | 'success' | 'failure' | 'error';
  description: string | null;
  targetUrl: string | null;
}

/** A node id for GraphQL, as GitHub makes them: opaque, stable per object. */
export function nodeId(kind: string, id: number): string {
  return `${kind}_kwDO${createHash('sha256').update(`${kind}${id}`).digest('hex').slice(0, 12)}`;
}

/** A 40-hex sha standing for a name, for branches a test does not back with real git. */
export function fakeSha(name: string): string {
  return createHash('sha1').update(name).digest('hex');
}

export function githubUser(login: string | null): Json | null {
  if (login === null) return null;
  const user = documentedExample('simple-user');
  const id = 3000 + (parseInt(fakeSha(login).slice(0, 6), 16) % 100_000);
  return {
    ...user,
    login,
    id,
    node_id: nodeId('U', id),
    url: `https://api.github.com/users/${login}`,
    html_url: `https://github.com/${login}`,
  };
}

/** The full form (`pulls/get`, `pulls/create`) or the list form (`pulls/list`). */
export function githubPull(repository: string, pull: FakePull, form: 'full' | 'simple'): Json {
  const base = documentedExample(form === 'full' ? 'pull-request' : 'pull-request-simple');
  const api = `https://api.github.com/repos/${repository}`;
  const html = `https://github.com/${repository}/pull/${pull.number}`;
  const [owner] = repository.split('/');
  const ref = (side: unknown, branch: string, sha: string): Json => ({
    ...(side as Json),
    label: `${owner}:${branch}`,
    ref: branch,
    sha,
  });
  const baseSide = base.base as Json;
  const out: Json = {
    ...base,
    url: `${api}/pulls/${pull.number}`,
    id: 900_000 + pull.number,
    node_id: nodeId('PR', pull.number),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${api}/issues/${pull.number}`,
    number: pull.number,
    state: pull.state,
    title: pull.title,
    body: pull.body,
    user: githubUser(pull.author),
    draft: pull.draft,
    labels: [],
    milestone: null,
    requested_teams: [],
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
    closed_at: pull.state === 'closed' ? pull.updatedAt : null,
    merged_at: pull.merged ? pull.updatedAt : null,
    head: ref(base.head, pull.head, pull.headSha),
    base: ref(baseSide, pull.base, fakeSha(`base ${pull.base}`)),
  };
  if (form === 'full') {
    out.merged = pull.merged;
    out.merged_by = pull.merged ? githubUser('octocat') : null;
  }
  return out;
}

export function githubReview(repository: string, review: FakeReview): Json {
  return {
    ...documentedExample('pull-request-review'),
    id: review.id,
    node_id: nodeId('PRR', review.id),
    user: githubUser(review.author),
    body: review.body,
    state: review.state,
    html_url: `https://github.com/${repository}/pull/${review.pull}#pullrequestreview-${review.id}`,
    pull_request_url: `https://api.github.com/repos/${repository}/pulls/${review.pull}`,
    submitted_at: review.submittedAt,
    commit_id: review.commitSha,
  };
}

export function githubReviewComment(repository: string, comment: FakeReviewComment): Json {
  const api = `https://api.github.com/repos/${repository}`;
  const { line: _line, ...example } = documentedExample('pull-request-review-comment');
  return {
    ...example,
    url: `${api}/pulls/comments/${comment.id}`,
    id: comment.id,
    node_id: nodeId('PRRC', comment.id),
    path: comment.path,
    commit_id: comment.commitSha,
    original_commit_id: comment.commitSha,
    user: githubUser(comment.author),
    body: comment.body,
    created_at: comment.createdAt,
    updated_at: comment.createdAt,
    html_url: `https://github.com/${repository}/pull/${comment.pull}#discussion_r${comment.id}`,
    pull_request_url: `${api}/pulls/${comment.pull}`,
    original_line: comment.originalLine,
    start_line: null,
    original_start_line: null,
    // GitHub's description has `line` an integer: an outdated comment's is left out here.
    ...(comment.line === null ? {} : { line: comment.line }),
  };
}

export function githubPullComment(repository: string, comment: FakePullComment): Json {
  const api = `https://api.github.com/repos/${repository}`;
  return {
    ...documentedExample('issue-comment'),
    id: comment.id,
    node_id: nodeId('IC', comment.id),
    url: `${api}/issues/comments/${comment.id}`,
    html_url: `https://github.com/${repository}/pull/${comment.pull}#issuecomment-${comment.id}`,
    issue_url: `${api}/issues/${comment.pull}`,
    body: comment.body,
    user: githubUser(comment.author),
    created_at: comment.createdAt,
    updated_at: comment.createdAt,
  };
}

export function githubCheckRun(repository: string, run: FakeCheckRun): Json {
  const template = (documentedExample('check-run-paginated').check_runs as Json[])[0] as Json;
  const completed = run.status === 'completed';
  return {
    ...template,
    id: run.id,
    node_id: nodeId('CR', run.id),
    head_sha: run.sha,
    url: `https://api.github.com/repos/${repository}/check-runs/${run.id}`,
    html_url: `https://github.com/${repository}/runs/${run.id}`,
    name: run.name,
    status: run.status,
    conclusion: completed ? run.conclusion : null,
    completed_at: completed ? template.completed_at : null,
    output: {
      ...(template.output as Json),
      title: run.name,
      summary: run.summary,
      text: run.text,
    },
  };
}

/** The combined status of a commit: the latest status of each context, as GitHub folds them. */
export function githubCombinedStatus(
  repository: string,
  sha: string,
  statuses: readonly FakeStatus[],
): Json {
  const base = documentedExample('combined-commit-status');
  const template = (base.statuses as Json[])[0] as Json;
  const states = statuses.map((status) => status.state);
  const state = states.some((s) => s === 'failure' || s === 'error')
    ? 'failure'
    : states.includes('pending') || states.length === 0
      ? 'pending'
      : 'success';
  return {
    ...base,
    state,
    sha,
    total_count: statuses.length,
    commit_url: `https://api.github.com/repos/${repository}/commits/${sha}`,
    url: `https://api.github.com/repos/${repository}/commits/${sha}/status`,
    statuses: statuses.map((status) => ({
      ...template,
      id: status.id,
      node_id: nodeId('SC', status.id),
      url: `https://api.github.com/repos/${repository}/statuses/${sha}`,
      state: status.state,
      description: status.description,
      target_url: status.targetUrl,
      context: status.context,
    })),
  };
}

/** The tip of a branch and how far it is ahead of the base it is compared with. */
export interface BranchHead {
  sha: string;
  aheadBy: number;
}

/** GitHub lists at most this many commits in one comparison. */
export const COMPARE_COMMITS = 250;

export function githubComparison(
  repository: string,
  base: string,
  head: string,
  found: BranchHead,
): Json {
  const example = documentedExample('commit-comparison');
  const commit = (example.commits as Json[])[0] as Json;
  const baseSha = fakeSha(`base ${base}`);
  const listed = Math.min(found.aheadBy, COMPARE_COMMITS);
  // Oldest first, as GitHub lists them; the last one is the tip when all of them fit.
  const shas = Array.from({ length: listed }, (_, index) =>
    index === listed - 1 && found.aheadBy <= COMPARE_COMMITS
      ? found.sha
      : fakeSha(`${head} ${index}`),
  );
  const commitAt = (sha: string): Json => ({
    ...commit,
    sha,
    node_id: nodeId('C', parseInt(sha.slice(0, 8), 16)),
    url: `https://api.github.com/repos/${repository}/commits/${sha}`,
  });
  const mergeBase = found.aheadBy === 0 ? found.sha : baseSha;
  return {
    ...example,
    url: `https://api.github.com/repos/${repository}/compare/${base}...${head}`,
    status: found.aheadBy === 0 ? (found.sha === baseSha ? 'identical' : 'behind') : 'ahead',
    ahead_by: found.aheadBy,
    behind_by: 0,
    total_commits: found.aheadBy,
    base_commit: commitAt(baseSha),
    merge_base_commit: commitAt(mergeBase),
    commits: shas.map(commitAt),
    files: [],
  };
}

export function githubBranch(repository: string, branch: string, sha: string): Json {
  const example = documentedExample('branch-get');
  return {
    ...example,
    name: branch,
    commit: {
      ...(example.commit as Json),
      sha,
      url: `https://api.github.com/repos/${repository}/commits/${sha}`,
    },
  };
}

export function githubRepository(repository: string, defaultBranch: string): Json {
  const [owner = 'acme', name = 'app'] = repository.split('/');
  const example = documentedExample('full-repository');
  return {
    ...example,
    name,
    full_name: repository,
    owner: githubUser(owner),
    html_url: `https://github.com/${repository}`,
    url: `https://api.github.com/repos/${repository}`,
    default_branch: defaultBranch,
    has_discussions: false,
  };
}

export function githubAuthenticatedUser(login: string): Json {
  const example = documentedExample(
    'private-user-response-with-public-and-private-profile-information',
  );
  return { ...example, ...githubUser(login) };
}
