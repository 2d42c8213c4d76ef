// The code-host half of the GitHub stand-in: the repository, the token's user, branch
// comparisons, pull requests (list, open, get), their reviews, review comments and
// conversation comments, and the check runs and commit statuses of a commit. Tests drive the
// state through the functions of `createPullState` (a review arrives, CI finishes, someone
// merges); branches come from an injected `branchHead`, which the review-loop test backs with
// the real git server, so a comparison says what was really pushed.
import {
  type BranchHead,
  type FakeCheckRun,
  type FakePull,
  type FakePullComment,
  type FakeReview,
  type FakeReviewComment,
  type FakeStatus,
  githubAuthenticatedUser,
  githubBranch,
  githubCheckRun,
  githubCombinedStatus,
  githubComparison,
  githubPull,
  githubPullComment,
  githubRepository,
  githubReview,
  githubReviewComment,
} from './github-code-data.js';
import { secondsFrom } from './stand-in-clock.js';

type Json = Record<string, unknown>;

export interface PullAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** A branch's tip and its distance ahead of `base`; null when the branch does not exist. */
export type BranchHeadLookup = (
  repository: string,
  branch: string,
  base: string,
) => Promise<BranchHead | null>;

export interface PullState {
  repository: string;
  defaultBranch: string;
  /** The login the token acts as; null: /user answers 403, as for an installation token. */
  login: string | null;
  /** Items per page at most, whatever per_page asks (to exercise Link pagination). */
  pageSize: number;
  /** Branches a test sets by hand, used when no `branchHead` is injected. */
  branches: Map<string, BranchHead>;
  branchHead: BranchHeadLookup;
  pullList: FakePull[];
  reviews: FakeReview[];
  reviewComments: FakeReviewComment[];
  pullComments: FakePullComment[];
  checkRuns: FakeCheckRun[];
  statuses: FakeStatus[];
}

/** Where GitHub's error bodies point (documentation_url); the issue writes share it. */
export const DOCS = 'https://docs.github.com/rest';
/** GitHub's 404, for pull requests and issues alike. */
export const notFound = (): PullAnswer => ({
  status: 404,
  body: { message: 'Not Found', documentation_url: DOCS, status: '404' },
});
const unprocessable = (message: string): PullAnswer => ({
  status: 422,
  body: { message: 'Validation Failed', errors: [{ message }], documentation_url: DOCS },
});

// A clock of its own: every event is a second after the one before it.
const clock = secondsFrom('2026-04-01T00:00:00Z');
export const stamp = (): string => clock().toISOString().replace('.000', '');

export function createPullState(
  repository: string,
  options: { defaultBranch?: string; branchHead?: BranchHeadLookup } = {},
): PullState {
  const state: PullState = {
    repository,
    defaultBranch: options.defaultBranch ?? 'main',
    login: 'lorenz-bot',
    pageSize: 100,
    branches: new Map(),
    branchHead:
      options.branchHead ??
      ((_repo, branch) => Promise.resolve(state.branches.get(branch) ?? null)),
    pullList: [],
    reviews: [],
    reviewComments: [],
    pullComments: [],
    checkRuns: [],
    statuses: [],
  };
  return state;
}

/** One page of a list, with a Link to the next page as GitHub gives it. */
function pageOf<T>(state: PullState, items: readonly T[], url: URL) {
  const size = Math.min(Number(url.searchParams.get('per_page') ?? 30), state.pageSize);
  const page = Number(url.searchParams.get('page') ?? 1);
  const headers: Record<string, string> = {};
  if (page * size < items.length) {
    const next = new URL(url);
    next.searchParams.set('page', String(page + 1));
    headers.link = `<${next.toString()}>; rel="next"`;
  }
  return { items: items.slice((page - 1) * size, page * size), headers };
}

function paged<T>(state: PullState, items: readonly T[], url: URL, render: (item: T) => Json) {
  const { items: page, headers } = pageOf(state, items, url);
  return { status: 200, body: page.map(render), headers };
}

/** The pull as it is now: an open pull's head follows its branch, as on GitHub. */
async function current(state: PullState, pull: FakePull): Promise<FakePull> {
  if (pull.state !== 'open') return pull;
  const head = await state.branchHead(state.repository, pull.head, pull.base);
  if (head !== null && head.sha !== pull.headSha) {
    pull.headSha = head.sha;
    pull.updatedAt = stamp();
  }
  return pull;
}

async function listPulls(state: PullState, url: URL): Promise<PullAnswer> {
  const wanted = url.searchParams.get('state') ?? 'open';
  const head = url.searchParams.get('head');
  const owner = state.repository.split('/')[0] ?? '';
  const matching = state.pullList
    .filter((pull) => wanted === 'all' || pull.state === wanted)
    .filter(
      (pull) => head === null || `${owner}:${pull.head}`.toLowerCase() === head.toLowerCase(),
    );
  const fresh = await Promise.all(matching.map((pull) => current(state, pull)));
  return paged(state, fresh, url, (pull) => githubPull(state.repository, pull, 'simple'));
}

async function createPull(state: PullState, body: Json): Promise<PullAnswer> {
  const { title, head, base } = body;
  if (typeof title !== 'string' || typeof head !== 'string' || typeof base !== 'string') {
    return unprocessable('title, head and base are required');
  }
  const tip = await state.branchHead(state.repository, head, base);
  if (tip === null) return unprocessable(`head: no branch ${head}`);
  if (tip.aheadBy === 0) return unprocessable(`No commits between ${base} and ${head}`);
  if (state.pullList.some((pull) => pull.state === 'open' && pull.head === head)) {
    return unprocessable(`A pull request already exists for ${head}.`);
  }
  const at = stamp();
  const pull: FakePull = {
    number: Math.max(0, ...state.pullList.map((p) => p.number)) + 1,
    title,
    body: typeof body.body === 'string' ? body.body : '',
    head,
    headSha: tip.sha,
    base,
    draft: body.draft === true,
    state: 'open',
    merged: false,
    author: state.login ?? 'lorenz-app[bot]',
    createdAt: at,
    updatedAt: at,
  };
  state.pullList.push(pull);
  return { status: 201, body: githubPull(state.repository, pull, 'full') };
}

async function compare(state: PullState, basehead: string): Promise<PullAnswer> {
  const [base, head] = decodeURIComponent(basehead).split('...');
  if (base === undefined || head === undefined) return notFound();
  const found = await state.branchHead(state.repository, head, base);
  if (found === null) return notFound();
  return { status: 200, body: githubComparison(state.repository, base, head, found) };
}

async function pullAnswer(state: PullState, number: number, rest: string, url: URL) {
  const pull = state.pullList.find((candidate) => candidate.number === number);
  if (pull === undefined) return null;
  const mine = <T extends { pull: number }>(items: readonly T[]) =>
    items.filter((item) => item.pull === number);
  if (rest === '') {
    return { status: 200, body: githubPull(state.repository, await current(state, pull), 'full') };
  }
  if (rest === '/reviews') {
    return paged(state, mine(state.reviews), url, (r) => githubReview(state.repository, r));
  }
  if (rest === '/comments') {
    const comments = mine(state.reviewComments);
    return paged(state, comments, url, (c) => githubReviewComment(state.repository, c));
  }
  return null;
}

function checksAnswer(state: PullState, sha: string, what: string, url: URL): PullAnswer | null {
  if (what === 'check-runs') {
    const runs = state.checkRuns.filter((run) => run.sha === sha);
    const { items, headers } = pageOf(state, runs, url);
    const checkRuns = items.map((run) => githubCheckRun(state.repository, run));
    return { status: 200, body: { total_count: runs.length, check_runs: checkRuns }, headers };
  }
  if (what === 'status') {
    const statuses = state.statuses.filter((status) => status.sha === sha);
    const { items, headers } = pageOf(state, statuses, url);
    const body = githubCombinedStatus(state.repository, sha, items);
    return { status: 200, body: { ...body, total_count: statuses.length }, headers };
  }
  return null;
}

/**
 * The answer to a code-host request under `/repos/<repository>` (`rest` is the path after it),
 * or null when no route here takes it (the issue routes may).
 */
export async function pullRoute(
  state: PullState,
  method: string,
  url: URL,
  rest: string,
  body: unknown,
): Promise<PullAnswer | null> {
  if (method === 'GET' && rest === '') {
    return { status: 200, body: githubRepository(state.repository, state.defaultBranch) };
  }
  const json = typeof body === 'object' && body !== null ? (body as Json) : {};
  if (rest === '/pulls') {
    if (method === 'GET') return listPulls(state, url);
    if (method === 'POST') return createPull(state, json);
    return null;
  }
  if (method !== 'GET') return null;
  const compareMatch = /^\/compare\/([^/]+)$/.exec(rest);
  if (compareMatch !== null) return compare(state, compareMatch[1] ?? '');
  const branchMatch = /^\/branches\/([^/]+)$/.exec(rest);
  if (branchMatch !== null) {
    const branch = decodeURIComponent(branchMatch[1] ?? '');
    const head = await state.branchHead(state.repository, branch, state.defaultBranch);
    return head === null
      ? notFound()
      : { status: 200, body: githubBranch(state.repository, branch, head.sha) };
  }
  const pullMatch = /^\/pulls\/(\d+)((?:\/reviews|\/comments)?)$/.exec(rest);
  if (pullMatch !== null) {
    return (await pullAnswer(state, Number(pullMatch[1]), pullMatch[2] ?? '', url)) ?? notFound();
  }
  const conversation = /^\/issues\/(\d+)\/comments$/.exec(rest);
  if (conversation !== null) {
    const number = Number(conversation[1]);
    if (!state.pullList.some((pull) => pull.number === number)) return null;
    const comments = state.pullComments.filter((comment) => comment.pull === number);
    return paged(state, comments, url, (c) => githubPullComment(state.repository, c));
  }
  const commitMatch = /^\/commits\/([^/]+)\/(check-runs|status)$/.exec(rest);
  if (commitMatch === null) return null;
  return checksAnswer(state, decodeURIComponent(commitMatch[1] ?? ''), commitMatch[2] ?? '', url);
}

/** GET /user: the token's user, or GitHub's 403 for a token that is no user's. */
export function userAnswer(state: PullState): PullAnswer {
  if (state.login === null) {
    return {
      status: 403,
      body: { message: 'Resource not accessible by integration', documentation_url: DOCS },
    };
  }
  return { status: 200, body: githubAuthenticatedUser(state.login) };
}
