// The GitHub code host against the GitHub stand-in, which checks every request and answer
// against GitHub's OpenAPI description (violations must stay empty) and keeps the rate-limit
// budget, so "costs nothing" is measured, not assumed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGithubCodeHost, githubGraphqlUrl } from '../../../src/codehost/github.js';
import type { CodeHost } from '../../../src/codehost/types.js';
import { EtagCache } from '../../../src/tracker/github/cache.js';
import {
  type GithubFault,
  type GithubStandIn,
  startGithubStandIn,
} from '../../support/fakes/github-server.js';
import { failureOf } from '../../support/lorenz-errors.js';
import { eachCase } from '../../support/cases.js';

const BRANCH = 'lorenz/issue-29';
const NOW = Date.parse('2026-04-01T12:00:00Z');

let standIn: GithubStandIn;
let warnings: string[];

function host(extra: { maxPages?: number; apiUrl?: string; timeoutMs?: number } = {}): CodeHost {
  return createGithubCodeHost({
    kind: 'github',
    apiUrl: extra.apiUrl ?? standIn.url,
    repository: standIn.repository,
    token: standIn.token,
    cache: new EtagCache(),
    now: () => NOW,
    onWarning: (message) => warnings.push(message),
    ...(extra.maxPages === undefined ? {} : { maxPages: extra.maxPages }),
    ...(extra.timeoutMs === undefined ? {} : { timeoutMs: extra.timeoutMs }),
  });
}

async function openDraft(codeHost: CodeHost, draft = true) {
  standIn.setBranch(BRANCH, { aheadBy: 2 });
  return codeHost.openPullRequest({
    head: BRANCH,
    base: 'main',
    title: 'Fix the widget (#29)',
    body: 'Closes #29',
    draft,
  });
}

beforeEach(async () => {
  standIn = await startGithubStandIn();
  warnings = [];
});

afterEach(async () => {
  expect(standIn.violations).toEqual([]);
  await standIn.close();
});

describe('the repository and the token', () => {
  it('reads the default branch and the login the token acts as', async () => {
    const codeHost = host();
    expect(codeHost.kind).toBe('github');
    expect(await codeHost.defaultBranch()).toBe('main');
    expect(await codeHost.identity()).toBe('lorenz-bot');
  });

  it('has no identity for a token that cannot read /user (an installation token)', async () => {
    standIn.pullState.login = null;
    expect(await host().identity()).toBeNull();
  });
});

describe('branch comparison', () => {
  it.each([
    ['ahead', { sha: 'a'.repeat(40), aheadBy: 3 }, { aheadBy: 3, headSha: 'a'.repeat(40) }],
    [
      'level with base',
      { sha: 'b'.repeat(40), aheadBy: 0 },
      { aheadBy: 0, headSha: 'b'.repeat(40) },
    ],
    // Past GitHub's 250 listed commits the tip is read from the branch itself.
    ['very long', { sha: 'c'.repeat(40), aheadBy: 300 }, { aheadBy: 300, headSha: 'c'.repeat(40) }],
  ])('reads a branch that is %s', async (_name, head, expected) => {
    standIn.setBranch(BRANCH, head);
    expect(await host().compareBranches('main', BRANCH)).toEqual(expected);
  });

  it('is null for a branch that was never pushed', async () => {
    expect(await host().compareBranches('main', 'lorenz/nothing')).toBeNull();
  });
});

describe('pull requests', () => {
  it('finds none, opens a draft, then finds it', async () => {
    const codeHost = host();
    expect(await codeHost.findOpenPullRequest(BRANCH)).toBeNull();
    const opened = await openDraft(codeHost);
    expect(opened).toMatchObject({
      number: 1,
      state: 'open',
      draft: true,
      title: 'Fix the widget (#29)',
      headBranch: BRANCH,
      baseBranch: 'main',
      url: 'https://github.com/acme/app/pull/1',
    });
    expect(opened.headSha).toBe(standIn.pullState.branches.get(BRANCH)?.sha);
    expect(standIn.pulls()).toMatchObject([{ number: 1, draft: true, body: 'Closes #29' }]);
    expect(await codeHost.findOpenPullRequest(BRANCH)).toEqual(opened);
    expect(await codeHost.findOpenPullRequest('lorenz/other')).toBeNull();
  });

  it('opens a pull request that is no draft', async () => {
    expect((await openDraft(host(), false)).draft).toBe(false);
  });

  it('marks a draft ready through the GraphQL mutation', async () => {
    const codeHost = host();
    const ready = await codeHost.markReady(await openDraft(codeHost));
    expect(ready).toMatchObject({ number: 1, draft: false, state: 'open' });
    expect(standIn.pulls()[0]?.draft).toBe(false);
    expect(standIn.requests.filter((r) => r.url.pathname === '/graphql')).toHaveLength(1);
  });

  it('sends no mutation for a pull request that is already ready', async () => {
    const codeHost = host();
    await codeHost.markReady(await openDraft(codeHost, false));
    expect(standIn.requests.some((r) => r.url.pathname === '/graphql')).toBe(false);
  });

  it.each([
    ['open', () => undefined, 'open'],
    ['closed', () => standIn.closePull(1), 'closed'],
    ['merged', () => standIn.mergePull(1), 'merged'],
  ])('reads a pull request that is %s', async (_name, act, state) => {
    const codeHost = host();
    await openDraft(codeHost);
    act();
    expect((await codeHost.getPullRequest(1)).state).toBe(state);
  });

  it('follows the head branch as it moves (a new push)', async () => {
    const codeHost = host();
    await openDraft(codeHost);
    standIn.setBranch(BRANCH, { sha: 'd'.repeat(40), aheadBy: 3 });
    expect((await codeHost.getPullRequest(1)).headSha).toBe('d'.repeat(40));
  });
});

describe('feedback', () => {
  it.each([
    ['no reviews', [], 'none'],
    ['a comment only', [['ana', 'COMMENTED']], 'commented'],
    ['one approval', [['ana', 'APPROVED']], 'approved'],
    [
      'approval and a change request',
      [
        ['ana', 'APPROVED'],
        ['bo', 'CHANGES_REQUESTED'],
      ],
      'changes_requested',
    ],
    [
      'a change request, then approval by the same reviewer',
      [
        ['ana', 'CHANGES_REQUESTED'],
        ['ana', 'APPROVED'],
      ],
      'approved',
    ],
    [
      'approval, then a change request by the same reviewer',
      [
        ['ana', 'APPROVED'],
        ['ana', 'CHANGES_REQUESTED'],
      ],
      'changes_requested',
    ],
    [
      'approval and a comment by another reviewer',
      [
        ['ana', 'APPROVED'],
        ['bo', 'COMMENTED'],
      ],
      'approved',
    ],
    [
      'a dismissed change request and an approval',
      [
        ['bo', 'DISMISSED'],
        ['ana', 'APPROVED'],
      ],
      'approved',
    ],
    ['a pending review only', [['ana', 'PENDING']], 'none'],
  ] as const)('combines %s into %s', async (_name, reviews, state) => {
    const codeHost = host();
    const pull = await openDraft(codeHost);
    for (const [author, review] of reviews) {
      standIn.addPullReview(1, { author, state: review, body: `${author} says ${review}` });
    }
    const feedback = await codeHost.feedback(pull);
    expect(feedback.state).toBe(state);
    // DISMISSED and PENDING are not reviews the loop acts on.
    const kept = reviews.filter(([, review]) => review !== 'DISMISSED' && review !== 'PENDING');
    expect(feedback.reviews.map((review) => [review.author, review.body])).toEqual(
      kept.map(([author, review]) => [author, `${author} says ${review}`]),
    );
    expect(warnings).toEqual([]);
  });

  it('reads review comments with their path and line and conversation comments without', async () => {
    const codeHost = host();
    const pull = await openDraft(codeHost);
    standIn.addPullReview(1, { author: 'ana', state: 'CHANGES_REQUESTED', body: 'See inline' });
    standIn.addReviewComment(1, { author: 'ana', body: 'Off by one', path: 'src/a.ts', line: 12 });
    standIn.addIssueComment(1, { author: 'bo', body: 'Also update the docs' });
    standIn.addReviewComment(1, {
      author: 'ana',
      body: 'Outdated now',
      path: 'src/b.ts',
      line: null,
    });
    const feedback = await codeHost.feedback(pull);
    expect(feedback.comments).toEqual([
      expect.objectContaining({ author: 'ana', body: 'Off by one', path: 'src/a.ts', line: 12 }),
      expect.objectContaining({
        author: 'bo',
        body: 'Also update the docs',
        path: null,
        line: null,
      }),
      // GitHub drops `line` of an outdated comment; the line it was written on is kept.
      expect.objectContaining({ body: 'Outdated now', path: 'src/b.ts', line: 1 }),
    ]);
    expect(feedback.reviews[0]).toMatchObject({
      author: 'ana',
      state: 'changes_requested',
      commitSha: pull.headSha,
    });
    expect(feedback.comments.every((comment) => comment.createdAt !== null)).toBe(true);
  });

  it('reads what an idle pull request has said at no rate-limit cost the second time', async () => {
    const codeHost = host();
    const pull = await openDraft(codeHost);
    standIn.addReviewComment(1, { author: 'ana', body: 'Nit', path: 'a.ts', line: 1 });
    const first = await codeHost.feedback(pull);
    await codeHost.checks(pull.headSha);
    await codeHost.getPullRequest(1);
    const remaining = standIn.rateLimit.remaining;
    const hits = standIn.conditionalHits;
    expect(await codeHost.feedback(pull)).toEqual(first);
    await codeHost.checks(pull.headSha);
    await codeHost.getPullRequest(1);
    expect(standIn.rateLimit.remaining).toBe(remaining);
    expect(standIn.conditionalHits - hits).toBe(6);
    // A new comment is a changed answer: read in full, and paid for.
    standIn.addIssueComment(1, { author: 'bo', body: 'One more thing' });
    expect((await codeHost.feedback(pull)).comments).toHaveLength(2);
    expect(standIn.rateLimit.remaining).toBe(remaining - 1);
  });

  it('reads at most ten pages of a list and says so', async () => {
    const codeHost = host();
    const pull = await openDraft(codeHost);
    standIn.pullState.pageSize = 1;
    for (let n = 1; n <= 12; n++) standIn.addIssueComment(1, { author: 'bo', body: `#${n}` });
    const feedback = await codeHost.feedback(pull);
    expect(feedback.comments.map((comment) => comment.body)).toEqual(
      Array.from({ length: 10 }, (_, index) => `#${index + 1}`),
    );
    expect(warnings).toEqual([expect.stringMatching(/more than 10 pages of the comments of #1/)]);
  });
});

describe('checks', () => {
  it('reads check runs and commit statuses, with the tail of their output', async () => {
    const sha = 'e'.repeat(40);
    const log = `${'x'.repeat(3000)}\nFAIL test/widget.test.ts`;
    standIn.setCheckRun(sha, {
      name: 'build',
      status: 'completed',
      conclusion: 'success',
      summary: 'ok',
    });
    standIn.setCheckRun(sha, {
      name: 'test',
      status: 'completed',
      conclusion: 'failure',
      summary: '1 failed',
      text: log,
    });
    standIn.setCheckRun(sha, { name: 'lint', status: 'in_progress' });
    standIn.setCommitStatus(sha, {
      context: 'ci/legacy',
      state: 'pending',
      description: 'running',
    });
    standIn.setCommitStatus(sha, {
      context: 'ci/deploy',
      state: 'error',
      targetUrl: 'https://ci.example/1',
    });
    standIn.setCheckRun('f'.repeat(40), { name: 'other commit', status: 'queued' });
    const checks = await host().checks(sha);
    expect(checks.map((check) => [check.name, check.status, check.conclusion])).toEqual([
      ['build', 'completed', 'success'],
      ['test', 'completed', 'failure'],
      ['lint', 'in_progress', null],
      ['ci/legacy', 'in_progress', null],
      ['ci/deploy', 'completed', 'error'],
    ]);
    const test = checks[1];
    expect(test?.outputTail).toHaveLength(2000);
    expect(test?.outputTail?.endsWith('FAIL test/widget.test.ts')).toBe(true);
    expect(checks[0]?.outputTail).toBe('ok');
    expect(checks[0]?.url).toMatch(/^https:\/\/github\.com\/acme\/app\/runs\/\d+$/);
    expect(checks[3]?.outputTail).toBe('running');
    expect(checks[4]).toMatchObject({ outputTail: null, url: 'https://ci.example/1' });
  });

  it('is empty for a commit nothing ran on', async () => {
    expect(await host().checks('0'.repeat(40))).toEqual([]);
  });
});

describe('failures carry the codehost codes and never the token', () => {
  it.each<[string, GithubFault, string]>([
    [
      'a bad token (401)',
      { kind: 'status', status: 401, message: 'Bad credentials' },
      'codehost_status',
    ],
    [
      'an error quoting the Authorization header',
      { kind: 'echo-authorization' },
      'codehost_status',
    ],
    [
      'a secondary rate limit',
      { kind: 'secondary', retryAfterSeconds: 30 },
      'codehost_rate_limited',
    ],
    ['HTTP 429', { kind: 'http-429', retryAfterSeconds: 5 }, 'codehost_rate_limited'],
    ['a body that is not JSON', { kind: 'malformed' }, 'codehost_response'],
    ['a cut connection', { kind: 'reset' }, 'codehost_request'],
  ])('%s → %s', async (_name, fault, code) => {
    standIn.faults.push(fault);
    const error = await failureOf(host().defaultBranch());
    expect(error.code).toBe(code);
    expect(error.message).not.toContain(standIn.token);
    expect(JSON.stringify(error.detail)).not.toContain(standIn.token);
    expect(error.detail).toMatchObject({ codehost: 'github' });
  });

  it('is codehost_rate_limited with the retry time when the budget is spent', async () => {
    standIn.rateLimit.remaining = 0;
    const error = await failureOf(host().identity());
    expect(error.code).toBe('codehost_rate_limited');
    expect(error.detail).toMatchObject({ retryAt: '2030-03-17T17:46:40.000Z' });
  });

  it('is codehost_request when GitHub does not answer in time', async () => {
    standIn.faults.push({ kind: 'hang' });
    const error = await failureOf(host({ timeoutMs: 200 }).defaultBranch());
    expect(error).toMatchObject({
      code: 'codehost_request',
      message: expect.stringMatching(/200 ms/),
    });
  });

  it('is codehost_response for a pull request that is not one', async () => {
    standIn.faults.push({ kind: 'not-a-list' });
    const error = await failureOf(host().findOpenPullRequest(BRANCH));
    expect(error.code).toBe('codehost_response');
  });

  it.each([
    [{ token: '  ' }, /no token/],
    [{ repository: 'not a repository' }, /is not owner\/name/],
    [{ apiUrl: 'ftp://ghe.example' }, /http\(s\)/],
    [{ apiUrl: 'not a url' }, /not a URL/],
  ])('refuses settings %o as invalid_codehost_config', (change, message) => {
    const build = () =>
      createGithubCodeHost({
        kind: 'github',
        apiUrl: 'https://api.github.com',
        repository: 'acme/app',
        token: 'ghp_x',
        ...change,
      });
    expect(build).toThrow(message);
    expect(build).toThrow(expect.objectContaining({ code: 'invalid_codehost_config' }));
  });
});

describe('GitHub Enterprise Server', () => {
  eachCase('puts GraphQL for %s at %s', githubGraphqlUrl, [
    ['https://api.github.com', 'https://api.github.com/graphql'],
    ['https://api.github.com/', 'https://api.github.com/graphql'],
    ['https://ghe.example/api/v3', 'https://ghe.example/api/graphql'],
    ['https://ghe.example/api/v3/', 'https://ghe.example/api/graphql'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080/graphql'],
  ]);

  it('works under /api/v3, GraphQL under /api/graphql', async () => {
    await standIn.close();
    standIn = await startGithubStandIn({ prefix: '/api/v3' });
    expect(standIn.url).toMatch(/\/api\/v3$/);
    const codeHost = host();
    expect(await codeHost.identity()).toBe('lorenz-bot');
    const pull = await openDraft(codeHost);
    expect((await codeHost.markReady(pull)).draft).toBe(false);
    standIn.pullState.pageSize = 1;
    standIn.addIssueComment(1, { author: 'bo', body: 'one' });
    standIn.addIssueComment(1, { author: 'bo', body: 'two' });
    expect((await codeHost.feedback(pull)).comments.map((c) => c.body)).toEqual(['one', 'two']);
    const paths = standIn.requests.map((request) => request.url.pathname);
    expect(paths).toContain('/api/graphql');
    expect(paths).toContain('/repos/acme/app/pulls');
  });
});

describe('answers that are not what GitHub documents', () => {
  /** A fetch that hands the code host an edited answer for paths matching `path`. */
  function editing(path: RegExp, edit: (body: unknown) => unknown): typeof fetch {
    return async (input, init) => {
      const response = await fetch(input, init);
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (!path.test(new URL(url).pathname) || response.status !== 200) return response;
      const body = edit(await response.json());
      return new Response(JSON.stringify(body), { status: 200, headers: response.headers });
    };
  }

  function hostWith(fetchLike: typeof fetch): CodeHost {
    return createGithubCodeHost({
      kind: 'github',
      apiUrl: standIn.url,
      repository: standIn.repository,
      token: standIn.token,
      cache: new EtagCache(),
      fetch: fetchLike,
      onWarning: (message) => warnings.push(message),
    });
  }

  it('leaves out a comment that is not one, with a warning', async () => {
    const pull = await openDraft(host());
    standIn.addIssueComment(1, { author: 'bo', body: 'kept' });
    standIn.addIssueComment(1, { author: 'bo', body: 'broken' });
    const codeHost = hostWith(
      editing(/\/issues\/1\/comments$/, (body) =>
        (body as Record<string, unknown>[]).map((c) =>
          c.body === 'broken' ? { ...c, id: 'x' } : c,
        ),
      ),
    );
    const feedback = await codeHost.feedback(pull);
    expect(feedback.comments.map((comment) => comment.body)).toEqual(['kept']);
    expect(warnings).toEqual([
      expect.stringMatching(/the comments of #1 with an item that is not one/),
    ]);
  });

  it('is codehost_status when GraphQL refuses the ready mutation', async () => {
    const pull = await openDraft(host());
    const codeHost = hostWith(
      editing(/\/pulls\/1$/, (body) => ({ ...(body as object), node_id: 'PR_unknown' })),
    );
    const error = await failureOf(codeHost.markReady(pull));
    expect(error.code).toBe('codehost_status');
    expect(error.message).toMatch(/Could not resolve to a node with the global id of 'PR_unknown'/);
    expect(standIn.pulls()[0]?.draft).toBe(true);
  });
});
