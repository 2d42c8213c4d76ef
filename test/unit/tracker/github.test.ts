import { describe, expect, it } from 'vitest';
import { EtagCache, createGithubTracker } from '../../../src/tracker/github/index.js';
import { normalizeGithubIssue } from '../../../src/tracker/github/normalize.js';
import {
  DEFAULT_ACTIVE_STATES,
  DEFAULT_TERMINAL_STATES,
} from '../../../src/workflow/config-schema.js';
import { type FakeIssue, githubIssue, recordedScenario } from '../../support/fakes/github-data.js';
import type { GithubStandIn } from '../../support/fakes/github-server.js';
import { harnessPerTest, trackerConfig } from '../../support/fakes/github-tracker.js';

// Every request the adapter made, and every answer the stand-in gave, is documented.
const start = harnessPerTest();

const context = {
  repository: 'acme/app',
  labelPrefix: 'lorenz:',
  activeStates: DEFAULT_ACTIVE_STATES,
  terminalStates: DEFAULT_TERMINAL_STATES,
  assignee: null,
};

const queryOf = (standIn: GithubStandIn, index: number) =>
  Object.fromEntries(standIn.requests[index]?.url.searchParams ?? []);

describe('github: the state of an issue', () => {
  it.each<[string, FakeIssue['state'], string[], string]>([
    ['open without a state label: the first active state', 'open', ['bug'], 'Todo'],
    ['a state label, matched case-insensitively', 'open', ['Lorenz:IN PROGRESS'], 'In Progress'],
    ['lorenz:todo', 'open', ['lorenz:todo'], 'Todo'],
    ['an open issue labelled terminal', 'open', ['lorenz:done'], 'Done'],
    ['a state no list names stays as written', 'open', ['lorenz:review'], 'review'],
    ['closed without a label: the first terminal state', 'closed', [], 'Closed'],
    ['closed with a terminal label', 'closed', ['lorenz:duplicate'], 'Duplicate'],
    [
      'closed with a stale active label is still terminal',
      'closed',
      ['lorenz:in progress'],
      'Closed',
    ],
    [
      'two state labels: the terminal one wins',
      'open',
      ['lorenz:todo', 'lorenz:cancelled'],
      'Cancelled',
    ],
  ])('%s', (_, state, labels, expected) => {
    const item = githubIssue('acme/app', { number: 7, title: 'T', state, labels });
    expect(normalizeGithubIssue(item, context)?.state).toBe(expected);
  });

  it('normalizes the rest: id is the number, labels lower-cased without state labels', () => {
    const item = githubIssue('acme/app', {
      number: 42,
      title: 'Fix the login redirect',
      body: 'Steps…',
      labels: ['Backend', 'lorenz:in progress', 'priority:2', 'priority:3'],
      assignees: ['octocat'],
      createdAt: '2026-02-01T09:00:00Z',
    });
    expect(normalizeGithubIssue(item, context)).toEqual({
      id: '42',
      identifier: 'acme/app#42',
      title: 'Fix the login redirect',
      description: 'Steps…',
      priority: 2,
      state: 'In Progress',
      state_type: null,
      branch_name: null,
      url: 'https://github.com/acme/app/issues/42',
      assignee_id: 'octocat',
      blocked_by: [],
      labels: ['backend', 'priority:2', 'priority:3'],
      assigned_to_worker: true,
      created_at: '2026-02-01T09:00:00Z',
      updated_at: '2026-02-01T09:00:00Z',
    });
  });

  it('reads the issues GitHub answered in the recorded search-issues scenario', () => {
    const [search] = recordedScenario('search-issues');
    const items = (search?.response as { items: unknown[] }).items;
    const issues = items.map((item) => normalizeGithubIssue(item, context));
    expect(issues.map((issue) => [issue?.id, issue?.state, issue?.title])).toEqual([
      ['2', 'Todo', 'Sesame seeds split without a pop!'],
      ['1', 'Todo', 'The doors don’t open'],
    ]);
  });
});

describe('github: fetching candidates', () => {
  const board: FakeIssue[] = [
    { number: 1, title: 'Plain open', labels: ['Bug'], createdAt: '2026-01-01T00:00:00Z' },
    {
      number: 2,
      title: 'Working',
      labels: ['lorenz:in progress'],
      createdAt: '2026-01-02T00:00:00Z',
    },
    { number: 3, title: 'A pull request', pullRequest: true, createdAt: '2026-01-03T00:00:00Z' },
    { number: 4, title: 'Parked', labels: ['lorenz:review'], createdAt: '2026-01-04T00:00:00Z' },
    {
      number: 5,
      title: 'Done but open',
      labels: ['lorenz:done'],
      createdAt: '2026-01-05T00:00:00Z',
    },
    { number: 6, title: 'Closed', state: 'closed', createdAt: '2026-01-06T00:00:00Z' },
  ];

  it('lists open issues in active states, skipping pull requests, with the documented query', async () => {
    const { standIn, tracker } = await start(board);
    const issues = await tracker().fetchCandidates();
    expect(issues.map((issue) => [issue.identifier, issue.state])).toEqual([
      ['acme/app#1', 'Todo'],
      ['acme/app#2', 'In Progress'],
    ]);
    expect(standIn.requests).toHaveLength(1);
    expect(standIn.requests[0]?.url.pathname).toBe('/repos/acme/app/issues');
    expect(queryOf(standIn, 0)).toEqual({
      state: 'open',
      sort: 'created',
      direction: 'asc',
      per_page: '100',
    });
  });

  it('fetchByStates asks for closed issues too when a terminal state is wanted', async () => {
    const { standIn, tracker } = await start(board);
    const issues = await tracker().fetchByStates(['done', ' Closed ']);
    expect(issues.map((issue) => [issue.id, issue.state])).toEqual([
      ['5', 'Done'],
      ['6', 'Closed'],
    ]);
    expect(queryOf(standIn, 0).state).toBe('all');
    expect(await tracker().fetchByStates([' '])).toEqual([]);
  });

  it('passes tracker.assignee on as GitHub filter and marks whose issues are whose', async () => {
    const { standIn, tracker } = await start([
      { number: 1, title: 'Mine', assignees: ['octocat'] },
      { number: 2, title: 'Theirs', assignees: ['hubot'] },
    ]);
    const issues = await tracker({ assignee: 'octocat' }).fetchCandidates();
    expect(issues.map((issue) => [issue.id, issue.assigned_to_worker])).toEqual([['1', true]]);
    expect(queryOf(standIn, 0).assignee).toBe('octocat');
  });

  it('follows Link rel="next" across pages of 100', async () => {
    const many = Array.from({ length: 250 }, (_, index) => ({
      number: index + 1,
      title: `Issue ${index + 1}`,
      createdAt: `2026-01-01T00:${String(Math.floor(index / 60)).padStart(2, '0')}:${String(index % 60).padStart(2, '0')}Z`,
    }));
    const { standIn, tracker } = await start(many);
    const issues = await tracker().fetchCandidates();
    expect(issues.map((issue) => issue.id)).toEqual(many.map((issue) => String(issue.number)));
    expect(standIn.requests.map((request) => request.url.searchParams.get('page'))).toEqual([
      null,
      '2',
      '3',
    ]);
  });
});

describe('github: ETags', () => {
  const board: FakeIssue[] = [
    { number: 1, title: 'One' },
    { number: 2, title: 'Two', labels: ['lorenz:in progress'] },
  ];

  it('an unchanged poll is a 304 that costs no rate limit and returns the same issues', async () => {
    const { standIn, tracker } = await start(board);
    const first = await tracker().fetchCandidates();
    const remaining = standIn.rateLimit.remaining;
    // A new adapter per poll, as the controller builds them: the cache outlives it.
    const second = await tracker().fetchCandidates();
    expect(second).toEqual(first);
    const again = standIn.requests[1];
    expect(again?.ifNoneMatch).toMatch(/^W\/"/);
    expect(again?.status).toBe(304);
    expect(standIn.rateLimit.remaining).toBe(remaining);
  });

  it('a changed list is fetched again', async () => {
    const { standIn, tracker } = await start(board);
    await tracker().fetchCandidates();
    standIn.issues.push({ number: 3, title: 'Three' });
    const issues = await tracker().fetchCandidates();
    expect(issues.map((issue) => issue.id)).toEqual(['1', '2', '3']);
    expect(standIn.requests.map((request) => request.status)).toEqual([200, 200]);
  });

  it('pages answered 304 keep the Link of the answer they stand for', async () => {
    const many = Array.from({ length: 150 }, (_, index) => ({
      number: index + 1,
      title: `Issue ${index + 1}`,
      createdAt: `2026-01-01T0${Math.floor(index / 60)}:${String(index % 60).padStart(2, '0')}:00Z`,
    }));
    const { standIn, tracker } = await start(many);
    await tracker().fetchCandidates();
    const issues = await tracker().fetchCandidates();
    expect(issues).toHaveLength(150);
    expect(standIn.requests.map((request) => request.status)).toEqual([200, 200, 304, 304]);
  });

  it('a different token does not get another token’s cached answer', async () => {
    const { standIn, cache } = await start(board);
    const withToken = (token: string) =>
      createGithubTracker({ config: trackerConfig(standIn, { api_key: token }), cache });
    await withToken(standIn.token).fetchCandidates();
    await withToken('ghp_other')
      .fetchCandidates()
      .catch(() => undefined);
    expect(standIn.requests[1]?.ifNoneMatch).toBeUndefined();
    // The stand-in flags the foreign token; that one is expected here.
    standIn.violations = standIn.violations.filter((v) => !v.startsWith('Authorization'));
  });
});

describe('github: fetching by id', () => {
  it('GETs each issue by number, leaving out the gone, other repositories and pull requests', async () => {
    const { standIn, tracker } = await start([
      { number: 1, title: 'One' },
      { number: 2, title: 'Two', state: 'closed' },
      { number: 3, title: 'A PR', pullRequest: true },
    ]);
    const adapter = tracker();
    const ids = ['1', 'acme/app#2', '#2', '3', '404', 'other/repo#1', 'not-a-number'];
    const issues = await adapter.fetchByIds(ids);
    expect(issues.map((issue) => [issue.id, issue.state])).toEqual([
      ['1', 'Todo'],
      ['2', 'Closed'],
    ]);
    expect(standIn.requests.map((request) => request.url.pathname)).toEqual([
      '/repos/acme/app/issues/1',
      '/repos/acme/app/issues/2',
      '/repos/acme/app/issues/3',
      '/repos/acme/app/issues/404',
    ]);
    const before = standIn.rateLimit.remaining;
    await adapter.fetchByIds(['1', '2']);
    expect(standIn.requests.slice(-2).map((request) => request.status)).toEqual([304, 304]);
    expect(standIn.rateLimit.remaining).toBe(before);
    expect(await adapter.fetchByIds([])).toEqual([]);
  });
});

describe('github: settings', () => {
  const base = { kind: 'github', repository: 'acme/app' };
  const build = (tracker: Record<string, unknown>, env: NodeJS.ProcessEnv = {}, apiKey?: string) =>
    createGithubTracker({
      config: trackerConfig(
        { repository: 'acme/app', url: 'https://api.github.com' } as GithubStandIn,
        {
          api_key: null,
          endpoint: null,
          ...base,
          ...tracker,
        },
      ),
      env,
      cache: new EtagCache(),
      ...(apiKey === undefined ? {} : { apiKey }),
    });

  it.each<[string, Record<string, unknown>, NodeJS.ProcessEnv, string]>([
    ['no repository', { repository: null }, { GITHUB_TOKEN: 't' }, 'invalid_tracker_config'],
    [
      'a repository that is not owner/name',
      { repository: 'acme' },
      { GITHUB_TOKEN: 't' },
      'invalid_tracker_config',
    ],
    [
      'an endpoint that is not http(s)',
      { endpoint: 'ftp://x' },
      { GITHUB_TOKEN: 't' },
      'invalid_tracker_config',
    ],
    ['assignee me', { assignee: 'me' }, { GITHUB_TOKEN: 't' }, 'invalid_tracker_config'],
    ['no token anywhere', {}, {}, 'missing_tracker_secret'],
    [
      'a $VAR that is unset',
      { api_key: '$GH_TOKEN' },
      { GITHUB_TOKEN: 't' },
      'missing_tracker_secret',
    ],
  ])('%s', (_, tracker, env, code) => {
    expect(() => build(tracker, env)).toThrow(expect.objectContaining({ code }));
  });

  it('takes GITHUB_TOKEN when api_key is not set, and the given key over both', () => {
    expect(build({}, { GITHUB_TOKEN: 'ghp_env' }).kind).toBe('github');
    expect(build({}, {}, 'ghp_secret').kind).toBe('github');
  });

  it('sends requests under a GitHub Enterprise path prefix', async () => {
    const seen: string[] = [];
    const adapter = createGithubTracker({
      config: trackerConfig({
        repository: 'acme/app',
        url: 'https://ghe.example.com/api/v3/',
      } as GithubStandIn),
      env: { GH_TOKEN: 't' },
      cache: new EtagCache(),
      fetch: (input) => {
        seen.push(String(input));
        return Promise.resolve(new Response('[]', { status: 200 }));
      },
    });
    await adapter.fetchCandidates();
    expect(seen[0]).toMatch(/^https:\/\/ghe\.example\.com\/api\/v3\/repos\/acme\/app\/issues\?/);
  });
});
