// The github adapter's writer (the agent tools' side) against the GitHub stand-in, which
// checks every request, request body and answer against GitHub's OpenAPI description.
import { describe, expect, it } from 'vitest';
import type { TrackerWriter } from '../../../src/tracker/types.js';
import type { FakeIssue } from '../../support/fakes/github-data.js';
import type { GithubFault } from '../../support/fakes/github-server.js';
import { type Harness, harnessPerTest } from '../../support/fakes/github-tracker.js';
import { failureOf, errorText } from '../../support/lorenz-errors.js';

const startHarness = harnessPerTest();

const board = (): FakeIssue[] => [
  { number: 1, title: 'One', labels: ['bug', 'lorenz:todo'] },
  { number: 2, title: 'Two', labels: ['lorenz:in progress'] },
  { number: 3, title: 'Closed', state: 'closed', labels: ['lorenz:done'] },
  { number: 4, title: 'A pull request', pullRequest: true },
];

async function start(
  tracker: Record<string, unknown> = {},
  options: { timeoutMs?: number } = {},
): Promise<{ h: Harness; writer: TrackerWriter }> {
  const current = await startHarness(board());
  const writer = current.tracker(tracker, options).writer;
  if (writer === undefined) throw new Error('the github adapter has no writer');
  return { h: current, writer };
}

describe('github writer: reading', () => {
  it('reads an issue by number, #n or owner/name#n; pull requests and others are null', async () => {
    const { writer } = await start();
    expect((await writer.readIssue('1'))?.identifier).toBe('acme/app#1');
    expect((await writer.readIssue('#2'))?.state).toBe('In Progress');
    expect((await writer.readIssue('acme/app#3'))?.state).toBe('Done');
    expect(await writer.readIssue('4')).toBeNull();
    expect(await writer.readIssue('99')).toBeNull();
    expect(await writer.readIssue('other/repo#1')).toBeNull();
  });
});

describe('github writer: comments', () => {
  it('a comment shows in listComments, oldest first, with its author', async () => {
    const { writer } = await start();
    const first = await writer.comment('1', 'Starting on this.');
    await writer.comment('1', 'Done: see the branch.');
    await writer.comment('2', 'Not this issue.');
    const listed = await writer.listComments('1');
    expect(listed.map((comment) => comment.body)).toEqual([
      'Starting on this.',
      'Done: see the branch.',
    ]);
    expect(listed[0]).toEqual(first);
    expect(first.author).toBe('octokit-fixture-user-a');
    expect(first.id).toMatch(/^\d+$/);
  });

  it('listComments follows Link pages', async () => {
    const { h, writer } = await start();
    for (let n = 1; n <= 5; n += 1) {
      h.standIn.comments.push({
        id: 100 + n,
        issue: 2,
        body: `c${n}`,
        createdAt: '2026-02-01T00:00:00Z',
        updatedAt: '2026-02-01T00:00:00Z',
      });
    }
    h.standIn.commentPageSize = 2;
    const listed = await writer.listComments('2');
    expect(listed.map((comment) => comment.body)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
    expect(h.standIn.requests.filter((r) => r.url.pathname.endsWith('/comments'))).toHaveLength(3);
  });

  it('updateComment edits a comment of the issue, and the list shows the new body', async () => {
    const { h, writer } = await start();
    const posted = await writer.comment('1', 'draft');
    const edited = await writer.updateComment('1', posted.id, 'final');
    expect(edited.body).toBe('final');
    expect((await writer.listComments('1')).map((comment) => comment.body)).toEqual(['final']);
    const methods = h.standIn.requests.map((r) => `${r.method} ${r.url.pathname}`);
    expect(methods).toContain(`GET /repos/acme/app/issues/comments/${posted.id}`);
    expect(methods).toContain(`PATCH /repos/acme/app/issues/comments/${posted.id}`);
  });

  it.each([
    [
      'a comment of another issue',
      async (writer: TrackerWriter) => (await writer.comment('2', 'x')).id,
    ],
    ['a comment that does not exist', () => Promise.resolve('123456')],
    ['an id that is not a number', () => Promise.resolve('../1')],
  ])('updateComment refuses %s and writes nothing', async (_, idOf) => {
    const { h, writer } = await start();
    const id = await idOf(writer);
    const error = await failureOf(writer.updateComment('1', id, 'hijacked'));
    expect(error.code).toBe('tracker_status');
    expect(error.message).toMatch(/is not a comment of acme\/app#1/);
    expect(h.standIn.requests.filter((r) => r.method === 'PATCH')).toEqual([]);
    expect(h.standIn.comments.map((comment) => comment.body)).not.toContain('hijacked');
  });
});

describe('github writer: state', () => {
  it.each<[string, string, string, string, 'open' | 'closed', string[]]>([
    [
      'todo → in progress',
      '1',
      'in progress',
      'In Progress',
      'open',
      ['bug', 'lorenz:in progress'],
    ],
    ['in progress → Done closes the issue', '2', ' DONE ', 'Done', 'closed', ['lorenz:done']],
    ['a closed issue moved to Todo is reopened', '3', 'Todo', 'Todo', 'open', ['lorenz:todo']],
    [
      'a terminal state other than the first',
      '1',
      'cancelled',
      'Cancelled',
      'closed',
      ['bug', 'lorenz:cancelled'],
    ],
  ])('%s', async (_, id, state, expected, open, labels) => {
    const { h, writer } = await start();
    const moved = await writer.updateState(id, state);
    expect(moved.state).toBe(expected);
    const fake = h.standIn.issues.find((issue) => String(issue.number) === id);
    expect(fake?.state).toBe(open);
    expect(fake?.labels).toEqual(labels);
    expect((await writer.readIssue(id))?.state).toBe(expected);
    const patch = h.standIn.requests.find((r) => r.method === 'PATCH');
    expect(patch?.body).toMatchObject(
      open === 'closed' ? { state: 'closed', state_reason: 'completed' } : { state: 'open' },
    );
  });

  it('a state the repository has a label for is known, as the label spells it', async () => {
    const { h, writer } = await start();
    h.standIn.labels.push('lorenz:In Review');
    const moved = await writer.updateState('2', 'in review');
    expect(moved.state).toBe('in review');
    expect(h.standIn.issues[1]?.labels).toEqual(['lorenz:In Review']);
  });

  it.each(['Shipped', '', '   '])(
    'an unknown state %j is invalid_tracker_config, nothing written',
    async (state) => {
      const { h, writer } = await start();
      const error = await failureOf(writer.updateState('1', state));
      expect(error.code).toBe('invalid_tracker_config');
      expect(error.message).toMatch(/known: Todo, In Progress, Closed/);
      expect(h.standIn.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    },
  );

  it('a write is seen by the next poll: the cached list page is not served stale', async () => {
    const { h } = await start();
    const tracker = h.tracker();
    expect((await tracker.fetchCandidates()).map((issue) => issue.id)).toEqual(['1', '2']);
    // Unchanged: the conditional GET is a 304 from the cache.
    await tracker.fetchCandidates();
    expect(h.standIn.requests.at(-1)?.status).toBe(304);
    await tracker.writer?.updateState('1', 'Done');
    const after = await tracker.fetchCandidates();
    expect(after.map((issue) => issue.id)).toEqual(['2']);
    // The same URL with the old ETag: GitHub (and the stand-in) answer 200 with a new one.
    const last = h.standIn.requests.at(-1);
    expect(last?.ifNoneMatch).toBeDefined();
    expect(last?.status).toBe(200);
    expect((await tracker.fetchByIds(['1']))[0]?.state).toBe('Done');
  });
});

describe('github writer: createIssue', () => {
  it.each<[string, string | null, string, 'open' | 'closed']>([
    ['in the first active state by default', null, 'Todo', 'open'],
    ['in a named state', 'In Progress', 'In Progress', 'open'],
    ['in a terminal state: created, then closed', 'Done', 'Done', 'closed'],
  ])('%s', async (_, state, expected, open) => {
    const { h, writer } = await start();
    const created = await writer.createIssue?.({ title: 'Follow-up', description: 'More', state });
    expect(created).toMatchObject({ id: '5', identifier: 'acme/app#5', state: expected });
    expect(created?.description).toBe('More');
    expect(h.standIn.issues.at(-1)?.state).toBe(open);
  });
});

describe('github writer: failures', () => {
  it.each<[string, GithubFault, string, RegExp]>([
    [
      '401',
      { kind: 'status', status: 401, message: 'Bad credentials' },
      'tracker_status',
      /HTTP 401.*Bad credentials/,
    ],
    ['404', { kind: 'status', status: 404, message: 'Not Found' }, 'tracker_status', /HTTP 404/],
    [
      '422',
      { kind: 'status', status: 422, message: 'Validation Failed' },
      'tracker_status',
      /HTTP 422/,
    ],
    ['429', { kind: 'http-429', retryAfterSeconds: 30 }, 'tracker_rate_limited', /rate-limited/],
    ['secondary 403', { kind: 'secondary' }, 'tracker_rate_limited', /rate-limited/],
    ['500 echoing the token', { kind: 'echo-authorization' }, 'tracker_status', /HTTP 500/],
    ['malformed', { kind: 'malformed' }, 'tracker_response', /not JSON/],
    ['reset', { kind: 'reset' }, 'tracker_request', /failed/],
    ['timeout', { kind: 'hang' }, 'tracker_request', /did not answer within 200 ms/],
  ])('comment: %s → %s, the token never in the error', async (_, fault, code, message) => {
    const { h, writer } = await start({}, { timeoutMs: 200 });
    h.standIn.faults.push(fault);
    const error = await failureOf(writer.comment('1', 'hello'));
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    expect(errorText(error)).not.toContain(h.standIn.token);
  });

  it.each<[string, (writer: TrackerWriter) => Promise<unknown>]>([
    ['readIssue', (writer) => writer.readIssue('1')],
    ['listComments', (writer) => writer.listComments('1')],
    ['updateState', (writer) => writer.updateState('1', 'Done')],
    ['createIssue', (writer) => writer.createIssue?.({ title: 'x' }) ?? Promise.resolve()],
  ])('%s: a 500 echoing the token is tracker_status without it', async (_, call) => {
    const { h, writer } = await start();
    h.standIn.faults.push({ kind: 'echo-authorization' });
    const error = await failureOf(call(writer));
    expect(error.code).toBe('tracker_status');
    expect(error.detail).toMatchObject({ status: 500 });
    expect(errorText(error)).not.toContain(h.standIn.token);
  });

  it('an issue id of another repository is refused before any request', async () => {
    const { h, writer } = await start();
    const error = await failureOf(writer.comment('other/repo#1', 'x'));
    expect(error.code).toBe('tracker_status');
    expect(h.standIn.requests).toEqual([]);
  });
});
