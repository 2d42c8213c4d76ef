// The `linear` tracker adapter against a local Linear stand-in that builds Linear's published
// schema and rejects any query the real API would (test/support/fakes/linear-server.ts).
import { describe, expect, it } from 'vitest';
import {
  LINEAR_PAGE_SIZE,
  type LinearTrackerConfig,
  type LinearTrackerOptions,
  createLinearTracker,
} from '../../../src/tracker/linear/index.js';
import { linearPriority, normalizeLinearIssue } from '../../../src/tracker/linear/normalize.js';
import { ISSUES_QUERY, VIEWER_QUERY } from '../../../src/tracker/linear/queries.js';
import type { TrackerAdapter } from '../../../src/tracker/types.js';
import { parseConfig } from '../../../src/workflow/config.js';
import { fixtureData, withBulkProject } from '../../support/fakes/linear-data.js';
import { type LinearFault, type LinearStandIn } from '../../support/fakes/linear-server.js';
import { failureOf, failureOfSync, errorText } from '../../support/lorenz-errors.js';
import { linearStandInPerFile } from '../../support/fakes/linear-per-file.js';
import { eachCase } from '../../support/cases.js';

const KEY = 'lin_api_k3yThatMustNeverLeak0123456789';
const NOW = Date.parse('2026-03-01T10:00:00.000Z');

let standIn: LinearStandIn;
linearStandInPerFile(KEY, (started) => (standIn = started));

/** The tracker section as parseConfig gives it, from snake_case front matter. */
function trackerConfig(tracker: Record<string, unknown>): LinearTrackerConfig {
  return parseConfig({ tracker: { kind: 'linear', ...tracker } }).config.tracker;
}

function linear(
  tracker: Record<string, unknown>,
  options: Partial<LinearTrackerOptions> = {},
): TrackerAdapter {
  return createLinearTracker({
    config: trackerConfig({ endpoint: standIn.url, ...tracker }),
    apiKey: KEY,
    env: {},
    now: () => NOW,
    ...options,
  });
}

const identifiers = (issues: readonly { identifier: string }[]) =>
  issues.map((issue) => issue.identifier);

describe('the Linear stand-in', () => {
  it('accepts the adapter queries and rejects what Linear would reject', async () => {
    const post = (query: string, authorization = KEY) =>
      fetch(standIn.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ query, variables: { filter: {}, first: 1 } }),
      });
    expect((await post(ISSUES_QUERY)).status).toBe(200);
    expect((await post(VIEWER_QUERY)).status).toBe(200);
    const unknownField = await post('{ issues { nodes { id storyPoints } } }');
    expect(unknownField.status).toBe(400);
    const body = (await unknownField.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(
      (await post('{ issues(filter: { project: { slug: { eq: "x" } } }) { nodes { id } } }'))
        .status,
    ).toBe(400);
    expect((await post(VIEWER_QUERY, `Bearer ${KEY}`)).status).toBe(400);
  });
});

describe('fetchCandidates: scope', () => {
  const cases: { name: string; tracker: Record<string, unknown>; expected: string[] }[] = [
    { name: 'project_slugs', tracker: { project_slugs: ['alpha1'] }, expected: ['ENG-1', 'ENG-2'] },
    {
      name: 'project_slug (older key)',
      tracker: { project_slug: 'alpha1' },
      expected: ['ENG-1', 'ENG-2'],
    },
    {
      name: 'several slugs',
      tracker: { project_slugs: ['alpha1', 'beta2'] },
      expected: ['ENG-1', 'ENG-2', 'ENG-4'],
    },
    { name: 'project_labels', tracker: { project_labels: ['Mobile'] }, expected: ['ENG-4'] },
    {
      name: 'project_labels, several',
      tracker: { project_labels: ['Mobile', 'Platform'] },
      expected: ['ENG-1', 'ENG-2', 'ENG-4'],
    },
    {
      name: 'assignee me',
      tracker: { project_slugs: ['alpha1', 'beta2'], assignee: 'me' },
      expected: ['ENG-1'],
    },
    {
      name: 'assignee by id',
      tracker: { project_slugs: ['alpha1'], assignee: 'user-other' },
      expected: ['ENG-2'],
    },
    {
      name: 'empty assignee is everyone',
      tracker: { project_slugs: ['alpha1'], assignee: '' },
      expected: ['ENG-1', 'ENG-2'],
    },
    {
      name: 'states case-insensitively, trimmed',
      tracker: { project_slugs: ['alpha1'], active_states: ['todo', ' IN PROGRESS '] },
      expected: ['ENG-1', 'ENG-2'],
    },
    {
      name: 'only the active states',
      tracker: { project_slugs: ['alpha1'], active_states: ['Backlog'] },
      expected: ['ENG-6'],
    },
    {
      name: 'an active state that is also terminal is left out',
      tracker: { project_slugs: ['alpha1'], active_states: ['Todo', 'Done'] },
      expected: ['ENG-1'],
    },
    { name: 'a slug no project has', tracker: { project_slugs: ['nope'] }, expected: [] },
  ];
  it.each(cases)('$name', async ({ tracker, expected }) => {
    const issues = await linear(tracker).fetchCandidates();
    expect(identifiers(issues)).toEqual(expected);
  });

  it('asks for the viewer once per adapter for assignee me', async () => {
    const adapter = linear({ project_slugs: ['alpha1'], assignee: 'ME' });
    await adapter.fetchCandidates();
    await adapter.fetchCandidates();
    const viewerQueries = standIn.requests.filter((request) => request.query.includes('viewer'));
    expect(viewerQueries).toHaveLength(1);
  });

  it('sends the bare personal API key as Authorization', async () => {
    await linear({ project_slugs: ['alpha1'] }).fetchCandidates();
    expect(standIn.requests.map((request) => request.authorization)).toEqual([KEY]);
  });

  it('reads the key from tracker.api_key ($VAR) or LINEAR_API_KEY when none is given', async () => {
    const config = trackerConfig({ endpoint: standIn.url, project_slugs: ['alpha1'] });
    const fromVar = createLinearTracker({
      config: { ...config, apiKey: '$MY_LINEAR_KEY' },
      env: { MY_LINEAR_KEY: KEY, LINEAR_API_KEY: 'wrong' },
    });
    const fromDefault = createLinearTracker({ config, env: { LINEAR_API_KEY: KEY } });
    expect(identifiers(await fromVar.fetchCandidates())).toEqual(['ENG-1', 'ENG-2']);
    expect(identifiers(await fromDefault.fetchCandidates())).toEqual(['ENG-1', 'ENG-2']);
  });
});

describe('pagination', () => {
  it('follows endCursor across pages of 50', async () => {
    standIn.data = withBulkProject(fixtureData(), 120);
    const issues = await linear({ project_slugs: ['bulk9'] }).fetchCandidates();
    expect(issues).toHaveLength(120);
    expect(new Set(issues.map((issue) => issue.id)).size).toBe(120);
    expect(standIn.requests.map((request) => request.variables.first)).toEqual([
      LINEAR_PAGE_SIZE,
      LINEAR_PAGE_SIZE,
      LINEAR_PAGE_SIZE,
    ]);
    expect(standIn.requests.map((request) => request.variables.after === null)).toEqual([
      true,
      false,
      false,
    ]);
  });

  it.each([
    { pagination: 'repeat-cursor' as const, message: /cursor of an earlier page/ },
    { pagination: 'endless' as const, message: /past 5/ },
    { pagination: 'no-cursor' as const, message: /gave no cursor/ },
  ])('$pagination is tracker_pagination', async ({ pagination, message }) => {
    standIn.pagination = pagination;
    const error = await failureOf(
      linear({ project_slugs: ['alpha1'] }, { maxPages: 5 }).fetchCandidates(),
    );
    expect(error.code).toBe('tracker_pagination');
    expect(error.message).toMatch(message);
    expect(standIn.requests.length).toBeLessThanOrEqual(5);
  });
});

describe('normalized issues', () => {
  it('gives every issue key, blockers from inverse "blocks" relations only', async () => {
    const [first, second] = await linear({ project_slugs: ['alpha1'] }).fetchCandidates();
    expect(first).toEqual({
      id: 'issue-1',
      identifier: 'ENG-1',
      title: 'Issue 1',
      description: 'The login redirect loops.',
      priority: 2,
      state: 'Todo',
      state_type: 'unstarted',
      branch_name: 'me/eng-1-issue-1',
      url: 'https://linear.app/acme/issue/ENG-1',
      assignee_id: 'user-me',
      blocked_by: [],
      labels: ['backend', 'bug'],
      assigned_to_worker: true,
      created_at: '2026-01-01T00:01:00.000Z',
      updated_at: '2026-01-01T00:01:00.000Z',
    });
    expect(second?.priority).toBeNull();
    expect(second?.blocked_by).toEqual([
      { id: 'issue-3', identifier: 'ENG-3', state: 'Done', state_type: 'completed' },
    ]);
  });

  it('fetchByIds: the issues as they are, out of scope too, unknown ids left out', async () => {
    const adapter = linear({ project_slugs: ['beta2'], assignee: 'me' });
    const issues = await adapter.fetchByIds(['issue-2', 'issue-1', 'issue-999', 'issue-2']);
    expect(identifiers(issues)).toEqual(['ENG-1', 'ENG-2']);
    // Reassigned away from the key's user: still returned, no longer assigned to this worker.
    expect(issues.map((issue) => issue.assigned_to_worker)).toEqual([true, false]);
    expect(await adapter.fetchByIds([])).toEqual([]);
  });

  it('fetchByStates: issues of the scope in those states', async () => {
    const adapter = linear({ project_slugs: ['alpha1'] });
    expect(identifiers(await adapter.fetchByStates(['done', 'Backlog ']))).toEqual([
      'ENG-3',
      'ENG-6',
    ]);
    expect(await adapter.fetchByStates([' '])).toEqual([]);
  });

  it.each([
    { field: 'title', value: undefined },
    { field: 'identifier', value: '' },
    { field: 'id', value: null },
    { field: 'state', value: null },
    { field: 'title', value: 42 },
  ])('drops an item whose $field is $value, keeps the rest', async ({ field, value }) => {
    standIn.rewrite = (body) => {
      const nodes = (body as { data: { issues: { nodes: Record<string, unknown>[] } } }).data.issues
        .nodes;
      const node = nodes[0] as Record<string, unknown>;
      if (value === undefined) delete node[field];
      else node[field] = value;
    };
    const issues = await linear({ project_slugs: ['alpha1'] }).fetchCandidates();
    expect(identifiers(issues)).toEqual(['ENG-2']);
  });

  eachCase('priority %j → %j', linearPriority, [
    [0, null],
    [1, 1],
    [2, 2],
    [3, 3],
    [4, 4],
    [5, null],
    [2.5, null],
    [-1, null],
    [null, null],
    ['2', null],
  ]);

  it('every fixture priority reaches the issue as mapped', async () => {
    standIn.data.issues.forEach((issue, index) => {
      issue.priority = index % 5;
      issue.stateId = 'st-todo';
    });
    const issues = await linear({ project_slugs: ['alpha1', 'beta2', 'gamma3'] }).fetchCandidates();
    expect(issues.map((issue) => issue.priority)).toEqual([null, 1, 2, 3, 4, null]);
  });

  it('normalizeLinearIssue drops anything that is not an issue node', () => {
    expect(normalizeLinearIssue(null, null)).toBeNull();
    expect(normalizeLinearIssue([], null)).toBeNull();
    expect(normalizeLinearIssue({ id: 'x', identifier: 'X-1', title: 't' }, null)).toBeNull();
  });
});

describe('errors', () => {
  const cases: {
    name: string;
    fault?: LinearFault;
    setup?: () => void;
    options?: Partial<LinearTrackerOptions>;
    code: string;
    message: RegExp;
    detail?: Record<string, unknown>;
  }[] = [
    {
      name: "Linear's RATELIMITED answer (HTTP 400)",
      fault: { kind: 'ratelimited', requestsResetMs: NOW + 90_000 },
      code: 'tracker_rate_limited',
      message: /retry after 2026-03-01T10:01:30.000Z/,
      detail: { retryAt: '2026-03-01T10:01:30.000Z', retryAfterMs: 90_000, status: 400 },
    },
    {
      name: 'HTTP 429 with Retry-After',
      fault: { kind: 'http-429', retryAfterSeconds: 7 },
      code: 'tracker_rate_limited',
      message: /retry after 2026-03-01T10:00:07.000Z/,
      detail: { retryAfterMs: 7000, status: 429 },
    },
    {
      name: 'HTTP 500',
      fault: { kind: 'status', status: 500 },
      code: 'tracker_status',
      message: /HTTP 500/,
      detail: { status: 500 },
    },
    {
      name: 'HTTP 503',
      fault: { kind: 'status', status: 503 },
      code: 'tracker_status',
      message: /HTTP 503/,
      detail: { status: 503 },
    },
    {
      name: 'a wrong key',
      options: { apiKey: 'lin_api_wrong' },
      code: 'tracker_status',
      message: /HTTP 400: Authentication required/,
      detail: { status: 400, graphqlCode: 'AUTHENTICATION_ERROR' },
    },
    {
      name: 'GraphQL errors',
      fault: { kind: 'graphql-error', message: 'Entity not found: Project' },
      code: 'tracker_response',
      message: /Entity not found: Project/,
    },
    {
      name: 'a malformed body',
      fault: { kind: 'malformed' },
      code: 'tracker_response',
      message: /not a JSON object/,
    },
    {
      name: 'an answer without the issues page',
      setup: () => {
        standIn.rewrite = (body) => {
          (body as { data: Record<string, unknown> }).data.issues = { nodes: 'no' };
        };
      },
      code: 'tracker_response',
      message: /without a page/,
    },
    {
      name: 'no answer in time',
      fault: { kind: 'hang' },
      options: { timeoutMs: 200 },
      code: 'tracker_request',
      message: /did not answer within 200 ms/,
    },
    {
      name: 'a refused connection',
      options: { config: trackerConfigFor('http://127.0.0.1:1/graphql') },
      code: 'tracker_request',
      message: /request to Linear failed/,
    },
    {
      name: 'a server that echoes the key',
      fault: { kind: 'echo-authorization' },
      code: 'tracker_status',
      message: /bad key \[redacted\]/,
    },
  ];

  it.each(cases)('$name → $code, the key nowhere', async (entry) => {
    if (entry.fault) standIn.faults.push(entry.fault);
    entry.setup?.();
    const error = await failureOf(
      linear({ project_slugs: ['alpha1'] }, entry.options ?? {}).fetchCandidates(),
    );
    expect(error.code).toBe(entry.code);
    expect(error.message).toMatch(entry.message);
    if (entry.detail) expect(error.detail).toMatchObject(entry.detail);
    expect(errorText(error)).not.toContain(KEY);
  });

  it('a caller abort is tracker_request', async () => {
    standIn.faults.push({ kind: 'hang' });
    const error = await failureOf(
      linear({ project_slugs: ['alpha1'] }).fetchCandidates({ signal: AbortSignal.timeout(100) }),
    );
    expect(error.code).toBe('tracker_request');
  });

  it('a RATELIMITED answer to the viewer query is tracker_rate_limited too', async () => {
    standIn.faults.push({ kind: 'ratelimited', requestsResetMs: NOW + 1000 });
    const error = await failureOf(
      linear({ project_slugs: ['alpha1'], assignee: 'me' }).fetchCandidates(),
    );
    expect(error.code).toBe('tracker_rate_limited');
  });
});

function trackerConfigFor(endpoint: string): LinearTrackerConfig {
  return parseConfig({ tracker: { kind: 'linear', endpoint, project_slugs: ['alpha1'] } }).config
    .tracker;
}

describe('config errors', () => {
  const selectors = ['tracker.project_slugs', 'tracker.project_labels', 'tracker.project_slug'];
  it.each([
    { name: 'no project selector', tracker: {}, keys: selectors },
    {
      name: 'two selectors',
      tracker: { project_slugs: ['a'], project_slug: 'b' },
      keys: ['tracker.project_slugs', 'tracker.project_slug'],
    },
    {
      name: 'all three',
      tracker: { project_slugs: ['a'], project_labels: ['l'], project_slug: 'b' },
      keys: selectors,
    },
    {
      name: 'blank selectors only',
      tracker: { project_slugs: [' '], project_slug: '' },
      keys: selectors,
    },
    {
      name: 'an endpoint that is no URL',
      tracker: { project_slug: 'a', endpoint: 'nope' },
      keys: ['tracker.endpoint'],
    },
  ])('$name → invalid_tracker_config naming the keys', ({ tracker, keys }) => {
    const error = failureOfSync(() =>
      createLinearTracker({ config: trackerConfig(tracker), apiKey: KEY, env: {} }),
    );
    expect(error.code).toBe('invalid_tracker_config');
    for (const key of keys) expect(error.message).toContain(key);
    expect(error.detail).toMatchObject({ keys });
  });

  it.each([
    {
      name: 'no key anywhere',
      apiKey: null,
      env: {},
      message: /tracker.api_key or LINEAR_API_KEY/,
    },
    {
      name: 'an unset $VAR',
      apiKey: '$NOT_SET',
      env: { LINEAR_API_KEY: KEY },
      message: /\$NOT_SET/,
    },
    { name: 'an empty $VAR', apiKey: '$EMPTY', env: { EMPTY: ' ' }, message: /\$EMPTY/ },
  ])('$name → missing_tracker_secret', ({ apiKey, env, message }) => {
    const config = { ...trackerConfig({ project_slug: 'a' }), apiKey };
    const error = failureOfSync(() => createLinearTracker({ config, env }));
    expect(error.code).toBe('missing_tracker_secret');
    expect(error.message).toMatch(message);
    expect(errorText(error)).not.toContain(KEY);
  });
});
