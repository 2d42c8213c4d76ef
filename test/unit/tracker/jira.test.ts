// The `jira` tracker adapter against a local Jira Cloud stand-in that speaks REST v3's wire
// format (test/support/fakes/jira-server.ts).
import { describe, expect, it } from 'vitest';
import {
  type JiraTrackerConfig,
  type JiraTrackerOptions,
  adfToText,
  createJiraTracker,
  jiraPriority,
} from '../../../src/tracker/jira/index.js';
import type { TrackerAdapter } from '../../../src/tracker/types.js';
import { parseConfig } from '../../../src/workflow/config.js';
import { type JiraStandIn } from '../../support/fakes/jira-server.js';
import { failureOf, errorText } from '../../support/lorenz-errors.js';
import { jiraStandInPerFile } from '../../support/fakes/jira-per-file.js';

const EMAIL = 'agent@acme.test';
const TOKEN = 'ATATT3xFfGF0-jira-token-that-must-never-leak-0123';
const NOW = Date.parse('2026-03-01T10:00:00.000Z');

let standIn: JiraStandIn;
jiraStandInPerFile(EMAIL, TOKEN, (started) => (standIn = started));

function trackerConfig(tracker: Record<string, unknown>): JiraTrackerConfig {
  return parseConfig({ tracker: { kind: 'jira', ...tracker } }).config.tracker;
}

function jira(
  tracker: Record<string, unknown> = {},
  options: Partial<JiraTrackerOptions> = {},
): TrackerAdapter {
  return createJiraTracker({
    config: trackerConfig({
      endpoint: standIn.url,
      email: EMAIL,
      project_key: 'ENG',
      api_key: TOKEN,
      ...tracker,
    }),
    env: {},
    now: () => NOW,
    ...options,
  });
}

const keys = (issues: readonly { identifier: string }[]) => issues.map((issue) => issue.identifier);

const basic = Buffer.from(`${EMAIL}:${TOKEN}`).toString('base64');

describe('fetchCandidates', () => {
  it('searches the project in the active states with Basic auth and the enhanced search', async () => {
    const issues = await jira().fetchCandidates();
    expect(keys(issues)).toEqual(['ENG-1', 'ENG-2']);
    const search = standIn.requests.find((r) => r.path === '/rest/api/3/search/jql');
    expect(search?.authorization).toBe(`Basic ${basic}`);
    expect(search?.body).toMatchObject({
      jql: 'project = "ENG" AND status in ("Todo", "In Progress") ORDER BY key ASC',
      maxResults: 100,
    });
    expect(search?.body).not.toHaveProperty('startAt');
  });

  it('normalizes an issue', async () => {
    const [first, second] = await jira().fetchCandidates();
    expect(first).toEqual({
      id: '10001',
      identifier: 'ENG-1',
      title: 'Fix the login redirect',
      description: 'Users land on /home.\n\nExpected: back where they were.',
      priority: 2,
      state: 'Todo',
      state_type: 'unstarted',
      branch_name: null,
      url: `${standIn.url}/browse/ENG-1`,
      assignee_id: '5b10a2844c20165700ede21g',
      blocked_by: [],
      labels: ['backend', 'agent'],
      assigned_to_worker: true,
      created_at: '2026-01-01T09:00:00.000Z',
      updated_at: '2026-01-02T09:00:00.000Z',
    });
    expect(second?.state_type).toBe('started');
    expect(second?.priority).toBe(1);
    // ENG-2 is blocked by ENG-3 (Done) and ENG-4 (Review); ENG-2 blocks nothing.
    expect(second?.blocked_by).toEqual([
      { id: '10003', identifier: 'ENG-3', state: 'Done', state_type: 'completed' },
      { id: '10004', identifier: 'ENG-4', state: 'Review', state_type: 'started' },
    ]);
  });

  it('ANDs tracker.jql in parentheses', async () => {
    const issues = await jira({ jql: 'labels = agent' }).fetchCandidates();
    expect(keys(issues)).toEqual(['ENG-1']);
    expect(standIn.requests.at(-1)?.body?.jql).toBe(
      'project = "ENG" AND status in ("Todo", "In Progress") AND (labels = agent) ORDER BY key ASC',
    );
  });

  it('asks only for statuses the site has, in its spelling, looking them up once', async () => {
    const tracker = jira({ active_states: ['todo', 'Blocked', 'review'] });
    expect(keys(await tracker.fetchCandidates())).toEqual(['ENG-1', 'ENG-4']);
    await tracker.fetchCandidates();
    expect(standIn.requests.filter((r) => r.path === '/rest/api/3/status')).toHaveLength(1);
    expect(standIn.requests.at(-1)?.body?.jql).toContain('status in ("Todo", "Review")');
    expect(await jira({ active_states: ['Blocked'] }).fetchCandidates()).toEqual([]);
  });

  it('follows nextPageToken across pages, with or without isLast', async () => {
    standIn.pageCap = 1;
    expect(keys(await jira().fetchByStates(['Todo', 'In Progress', 'Done']))).toEqual([
      'ENG-1',
      'ENG-2',
      'ENG-3',
    ]);
    const tokens = standIn.requests.map((r) => r.body?.nextPageToken).filter(Boolean);
    expect(tokens).toHaveLength(2);
    standIn.pagination = 'no-is-last';
    expect(keys(await jira().fetchByStates(['Done', 'To Do']))).toEqual(['ENG-3', 'ENG-5']);
  });

  it('drops an issue it cannot normalize', async () => {
    standIn.issues = standIn.issues.map((issue) =>
      issue.key === 'ENG-1' ? { ...issue, summary: 42 as unknown as string } : issue,
    );
    expect(keys(await jira().fetchCandidates())).toEqual(['ENG-2']);
  });
});

describe('fetchByStates and fetchByIds', () => {
  it('fetches terminal issues in scope, skipping states the site lacks', async () => {
    const issues = await jira().fetchByStates(['Closed', 'Cancelled', 'Done', ' done ']);
    expect(keys(issues)).toEqual(['ENG-3']);
    expect(await jira().fetchByStates([' '])).toEqual([]);
  });

  it('bulk-fetches by id or key, out of scope too, leaving unknown ids out', async () => {
    const issues = await jira().fetchByIds(['10002', 'OPS-6', '99999', '10002']);
    expect(keys(issues)).toEqual(['ENG-2', 'OPS-6']);
    const request = standIn.requests.at(-1);
    expect(request?.path).toBe('/rest/api/3/issue/bulkfetch');
    expect(request?.body?.issueIdsOrKeys).toEqual(['10002', 'OPS-6', '99999']);
    expect(await jira().fetchByIds([])).toEqual([]);
  });

  it('splits more than 100 ids into several bulk fetches', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => String(20_000 + i));
    expect(await jira().fetchByIds([...ids, '10001'])).toHaveLength(1);
    expect(standIn.requests.filter((r) => r.path.endsWith('/bulkfetch'))).toHaveLength(2);
  });

  it('fails the refresh when Jira reports issueErrors, rather than call them gone', async () => {
    standIn.faults = [{ kind: 'issue-errors' }];
    expect((await failureOf(jira().fetchByIds(['10001', '10002']))).code).toBe('tracker_status');
  });
});

describe('failures', () => {
  it('429 with Retry-After is tracker_rate_limited with the retry time', async () => {
    standIn.faults = [{ kind: 'http-429', retryAfterSeconds: 30 }];
    const error = await failureOf(jira().fetchCandidates());
    expect(error.code).toBe('tracker_rate_limited');
    expect(error.detail).toMatchObject({
      retryAt: '2026-03-01T10:00:30.000Z',
      retryAfterMs: 30_000,
    });
  });

  it('429 with only X-RateLimit-Reset uses the reset time', async () => {
    standIn.faults = [{ kind: 'http-429-reset', resetAt: '2026-03-01T10:05Z' }];
    const error = await failureOf(jira().fetchCandidates());
    expect(error.code).toBe('tracker_rate_limited');
    expect(error.detail).toMatchObject({ retryAt: '2026-03-01T10:05:00.000Z' });
  });

  it.each([
    [401, 'a wrong token', { api_key: 'wrong-token' }],
    [500, 'a server error', {}],
  ])('HTTP %i (%s) is tracker_status', async (status, _name, tracker) => {
    if (status === 500) standIn.faults = [{ kind: 'status', status: 500 }];
    const error = await failureOf(jira(tracker).fetchCandidates());
    expect(error.code).toBe('tracker_status');
    expect(error.detail).toMatchObject({ status });
  });

  it('a JQL error is tracker_status with Jira’s message', async () => {
    const error = await failureOf(jira({ jql: 'summary ~ "x"' }).fetchCandidates());
    expect(error.code).toBe('tracker_status');
    expect(error.message).toMatch(/HTTP 400: Error in the JQL Query/);
  });

  it('a malformed or incomplete answer is tracker_response', async () => {
    const tracker = jira();
    await tracker.fetchByIds(['10001']);
    standIn.faults = [{ kind: 'malformed' }];
    expect((await failureOf(tracker.fetchCandidates())).code).toBe('tracker_response');
    standIn.faults = [{ kind: 'no-issues' }];
    expect((await failureOf(tracker.fetchByIds(['10001']))).code).toBe('tracker_response');
  });

  it.each(['repeat-token', 'endless', 'not-last-no-token'] as const)(
    'pages that do not add up (%s) are tracker_pagination',
    async (pagination) => {
      standIn.pagination = pagination;
      standIn.pageCap = 1;
      const error = await failureOf(jira({}, { maxPages: 5 }).fetchCandidates());
      expect(error.code).toBe('tracker_pagination');
      expect(
        standIn.requests.filter((r) => r.path.endsWith('/search/jql')).length,
      ).toBeLessThanOrEqual(5);
    },
  );

  it('no answer is tracker_request (timeout, refused connection)', async () => {
    standIn.faults = [{ kind: 'hang' }];
    const timedOut = await failureOf(jira({}, { timeoutMs: 200 }).fetchCandidates());
    expect(timedOut.code).toBe('tracker_request');
    expect(timedOut.message).toMatch(/within 200 ms/);
    const refused = await failureOf(jira({ endpoint: 'http://127.0.0.1:1' }).fetchCandidates());
    expect(refused.code).toBe('tracker_request');
  });

  it('never lets the token into an error, even when the server echoes it', async () => {
    standIn.faults = [{ kind: 'echo-authorization' }];
    const error = await failureOf(jira().fetchCandidates());
    expect(error.code).toBe('tracker_status');
    expect(error.message).toContain('[redacted]');
    expect(errorText(error)).not.toContain(TOKEN);
    expect(errorText(error)).not.toContain(basic);
  });
});

describe('settings', () => {
  const without = (key: string) => {
    const tracker: Record<string, unknown> = {
      kind: 'jira',
      endpoint: 'https://acme.atlassian.net',
      email: EMAIL,
      project_key: 'ENG',
      api_key: TOKEN,
    };
    delete tracker[key];
    return parseConfig({ tracker }).config.tracker;
  };

  it.each(['endpoint', 'email', 'project_key'])('refuses a config without %s', (key) => {
    expect(() => createJiraTracker({ config: without(key), env: {} })).toThrow(
      expect.objectContaining({ code: 'invalid_tracker_config' }),
    );
  });

  it('refuses ORDER BY in tracker.jql and credentials in the endpoint', () => {
    for (const extra of [
      { jql: 'labels = x ORDER BY created' },
      { endpoint: 'https://u:p@acme.atlassian.net' },
    ]) {
      expect(() => jira(extra)).toThrow(
        expect.objectContaining({ code: 'invalid_tracker_config' }),
      );
    }
  });

  it('takes the token from $VAR, else JIRA_API_TOKEN, else reports it missing', async () => {
    const env = { MY_TOKEN: TOKEN, JIRA_API_TOKEN: TOKEN };
    await jira({ api_key: '$MY_TOKEN' }, { env }).fetchByIds(['10001']);
    await jira({ api_key: null }, { env: { JIRA_API_TOKEN: TOKEN } }).fetchByIds(['10001']);
    expect(standIn.requests.every((r) => r.authorization === `Basic ${basic}`)).toBe(true);
    for (const apiKey of ['$UNSET', null]) {
      const build = () => jira({ api_key: apiKey }, { env: {} });
      expect(build).toThrow(expect.objectContaining({ code: 'missing_tracker_secret' }));
    }
  });
});

describe('normalizing', () => {
  it('maps Jira priorities to 1–4, the lowest and unknown ones to none', () => {
    const names = ['Highest', 'High', 'Medium', 'Low', 'Lowest', 'Blocker', 'Trivial', 'P0', null];
    expect(names.map((name) => jiraPriority(name === null ? null : { name }))).toEqual([
      1,
      2,
      3,
      4,
      null,
      1,
      null,
      null,
      null,
    ]);
  });

  it('reads ADF as plain text: paragraphs, headings, lists, breaks, mentions', () => {
    const doc = {
      type: 'doc',
      version: 1,
      content: [
        { type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Steps' }] },
        {
          type: 'paragraph',
          content: [
            { type: 'text', text: 'Ask ', marks: [{ type: 'strong' }] },
            { type: 'mention', attrs: { id: 'x', text: '@Ana' } },
            { type: 'hardBreak' },
            { type: 'text', text: 'then go.' },
          ],
        },
        {
          type: 'bulletList',
          content: [
            {
              type: 'listItem',
              content: [{ type: 'paragraph', content: [{ type: 'text', text: 'one' }] }],
            },
            {
              type: 'listItem',
              content: [{ type: 'paragraph', content: [{ type: 'text', text: 'two' }] }],
            },
          ],
        },
        { type: 'paragraph', content: [] },
      ],
    };
    expect(adfToText(doc)).toBe('Steps\n\nAsk @Ana\nthen go.\n\n- one\n- two');
    expect(adfToText('plain v2 text')).toBe('plain v2 text');
    expect(adfToText(null)).toBeNull();
    expect(adfToText({ type: 'doc', version: 1, content: [] })).toBeNull();
  });
});
