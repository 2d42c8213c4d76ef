// The `linear` adapter's writer against the Linear stand-in: every query and mutation is
// validated against Linear's published schema and applied to the stand-in's data.
import { describe, expect, it } from 'vitest';
import { createLinearTracker } from '../../../src/tracker/linear/index.js';
import type { TrackerAdapter, TrackerWriter } from '../../../src/tracker/types.js';
import { parseConfig } from '../../../src/workflow/config.js';
import { type LinearFault, type LinearStandIn } from '../../support/fakes/linear-server.js';
import { failureOf, errorText } from '../../support/lorenz-errors.js';
import { linearStandInPerFile } from '../../support/fakes/linear-per-file.js';

const KEY = 'lin_api_writesKeyThatMustNeverLeak42';

let standIn: LinearStandIn;
linearStandInPerFile(KEY, (started) => (standIn = started));

function linear(tracker: Record<string, unknown> = { project_slugs: ['alpha1'] }): TrackerAdapter {
  const config = parseConfig({ tracker: { kind: 'linear', endpoint: standIn.url, ...tracker } });
  return createLinearTracker({ config: config.config.tracker, apiKey: KEY, env: {} });
}

function writer(tracker?: Record<string, unknown>): TrackerWriter {
  const found = linear(tracker).writer;
  if (found === undefined) throw new Error('linear tracker without a writer');
  return found;
}

/** The names of the mutations sent, in order (reads are queries and left out). */
const mutationsSent = () =>
  standIn.requests.map((request) => /^\s*mutation (\w+)/.exec(request.query)?.[1]).filter(Boolean);

describe('linear writes', () => {
  it('the stand-in rejects a mutation the schema does not have, as Linear would', async () => {
    const post = (query: string, variables: Record<string, unknown>) =>
      fetch(standIn.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: KEY },
        body: JSON.stringify({ query, variables }),
      });
    const wrongField = await post(
      'mutation M($id: String!) { issueUpdate(id: $id, input: { state: "Done" }) { success } }',
      { id: 'issue-1' },
    );
    expect(wrongField.status).toBe(400);
    const wrongType = await post(
      'mutation M($input: CommentCreateInput!) { commentCreate(input: $input) { success } }',
      { input: { issueId: 'issue-1', body: 42 } },
    );
    expect(wrongType.status).toBe(400);
    expect(standIn.data.comments).toEqual([]);
  });

  it('comments, and listComments (a new adapter) shows the comment', async () => {
    const made = await writer().comment('issue-1', 'Started on it.');
    expect(made).toMatchObject({ body: 'Started on it.', author: 'Me' });
    expect(made.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await writer().listComments('issue-1')).toEqual([made]);
    expect(await writer().listComments('issue-2')).toEqual([]);
    expect(mutationsSent()).toEqual(['LorenzCommentCreate']);
  });

  it('lists comments across pages, in order', async () => {
    const w = writer();
    const bodies = Array.from({ length: 53 }, (_, index) => `note ${index}`);
    for (const body of bodies) await w.comment('issue-1', body);
    standIn.requests = [];
    const listed = await w.listComments('issue-1');
    expect(listed.map((comment) => comment.body)).toEqual(bodies);
    expect(standIn.requests).toHaveLength(2);
  });

  it('updates a comment of the issue, and refuses one of another issue', async () => {
    const w = writer();
    const mine = await w.comment('issue-1', 'draft');
    const theirs = await w.comment('issue-2', 'other');
    const updated = await w.updateComment('issue-1', mine.id, 'final');
    expect(updated).toMatchObject({ id: mine.id, body: 'final' });
    expect((await w.listComments('issue-1')).map((c) => c.body)).toEqual(['final']);
    const error = await failureOf(w.updateComment('issue-1', theirs.id, 'hijack'));
    expect(error.code).toBe('tracker_status');
    expect(error.message).toContain('not on issue issue-1');
    expect(standIn.data.comments.find((c) => c.id === theirs.id)?.body).toBe('other');
  });

  it.each([
    { asked: 'done', state: 'Done', type: 'completed' },
    { asked: '  in review ', state: 'In Review', type: 'started' },
    { asked: 'IN PROGRESS', state: 'In Progress', type: 'started' },
  ])('updateState($asked) moves the issue to $state', async ({ asked, state, type }) => {
    const tracker = linear();
    const moved = await tracker.writer?.updateState('issue-1', asked);
    expect(moved).toMatchObject({ identifier: 'ENG-1', state, state_type: type });
    expect((await tracker.fetchByIds(['issue-1']))[0]?.state).toBe(state);
    expect((await tracker.writer?.readIssue('issue-1'))?.state).toBe(state);
    expect(mutationsSent()).toEqual(['LorenzIssueUpdate']);
  });

  it.each([
    {
      issue: 'issue-1',
      asked: 'Shipped',
      known: 'Backlog, Todo, In Progress, In Review, Done, Canceled',
    },
    // Team Ops has its own states: Engineering's "In Review" is not one of them.
    { issue: 'issue-7', asked: 'In Review', known: 'Triage, Done' },
  ])(
    'an unknown state ($asked on $issue) is invalid_tracker_config naming the known ones',
    async (entry) => {
      const error = await failureOf(writer().updateState(entry.issue, entry.asked));
      expect(error.code).toBe('invalid_tracker_config');
      expect(error.message).toContain(JSON.stringify(entry.asked));
      expect(error.message).toContain(`known: ${entry.known}`);
      expect(mutationsSent()).toEqual([]);
    },
  );

  it('reads an issue as a poll does; a missing one is null', async () => {
    const w = writer();
    expect(await w.readIssue('issue-1')).toMatchObject({ identifier: 'ENG-1', state: 'Todo' });
    expect(await w.readIssue('issue-404')).toBeNull();
  });

  it('creates an issue in the first project in scope, in the state asked for', async () => {
    const tracker = linear({ project_labels: ['Mobile'] });
    const created = await tracker.writer?.createIssue?.({
      title: 'Follow-up',
      description: 'Found while fixing ENG-1.',
      state: 'todo',
    });
    expect(created).toMatchObject({
      title: 'Follow-up',
      state: 'Todo',
      description: 'Found while fixing ENG-1.',
    });
    const stored = standIn.data.issues.find((issue) => issue.id === created?.id);
    expect(stored).toMatchObject({ projectId: 'project-beta', teamId: 'team-eng' });
    expect((await tracker.fetchCandidates()).map((issue) => issue.title)).toContain('Follow-up');
  });

  it.each([
    {
      name: 'a missing issue',
      call: (w: TrackerWriter) => w.comment('issue-404', 'x'),
      code: 'tracker_response',
      message: /Entity not found/,
    },
    {
      name: 'a missing comment',
      call: (w: TrackerWriter) => w.updateComment('issue-1', 'nope', 'x'),
      code: 'tracker_response',
      message: /Entity not found/,
    },
    {
      name: 'no project in scope',
      call: (w: TrackerWriter) => w.createIssue?.({ title: 't' }) ?? Promise.resolve(),
      tracker: { project_slugs: ['nothing'] },
      code: 'invalid_tracker_config',
      message: /no project/,
    },
  ])('$name → $code', async ({ call, code, message, tracker }) => {
    const error = await failureOf(call(writer(tracker)));
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
  });
});

describe('linear write failures', () => {
  const calls: [string, (w: TrackerWriter) => Promise<unknown>][] = [
    ['comment', (w) => w.comment('issue-1', 'x')],
    ['listComments', (w) => w.listComments('issue-1')],
    ['updateState', (w) => w.updateState('issue-1', 'Done')],
    ['readIssue', (w) => w.readIssue('issue-1')],
  ];
  const faults: { fault: LinearFault; code: string; detail?: Record<string, unknown> }[] = [
    { fault: { kind: 'status', status: 500 }, code: 'tracker_status', detail: { status: 500 } },
    { fault: { kind: 'http-429', retryAfterSeconds: 7 }, code: 'tracker_rate_limited' },
    {
      fault: { kind: 'ratelimited', requestsResetMs: Date.now() + 5000 },
      code: 'tracker_rate_limited',
    },
    { fault: { kind: 'malformed' }, code: 'tracker_response' },
    { fault: { kind: 'graphql-error', message: 'bad input' }, code: 'tracker_response' },
    { fault: { kind: 'echo-authorization' }, code: 'tracker_status' },
  ];
  const cases = calls.flatMap(([call, run]) =>
    faults.map((entry) => ({ name: `${call} on ${entry.fault.kind}`, run, ...entry })),
  );

  it.each(cases)('$name → $code, the key nowhere', async ({ run, fault, code, detail }) => {
    standIn.faults.push(fault);
    const error = await failureOf(run(writer()));
    expect(error.code).toBe(code);
    if (detail) expect(error.detail).toMatchObject(detail);
    expect(errorText(error)).not.toContain(KEY);
  });

  it('a failure after the state lookup (the mutation) leaves the key out too', async () => {
    // The team and its states answer; only the mutation meets a server echoing the key.
    const echoing: typeof fetch = async (input, init) => {
      if (typeof init?.body === 'string' && init.body.includes('mutation LorenzIssueUpdate')) {
        const headers = new Headers(init.headers);
        const message = `denied for ${headers.get('authorization') ?? ''}`;
        return new Response(JSON.stringify({ errors: [{ message }] }), { status: 500 });
      }
      return fetch(input, init);
    };
    const config = parseConfig({
      tracker: { kind: 'linear', endpoint: standIn.url, project_slugs: ['alpha1'] },
    });
    const tracker = createLinearTracker({
      config: config.config.tracker,
      apiKey: KEY,
      env: {},
      fetch: echoing,
    });
    const error = await failureOf(
      tracker.writer?.updateState('issue-1', 'Done') ?? Promise.resolve(),
    );
    expect(error.code).toBe('tracker_status');
    expect(error.message).toContain('denied for [redacted]');
    expect(errorText(error)).not.toContain(KEY);
    expect(standIn.requests).toHaveLength(2);
  });
});

describe('linear raw GraphQL (the linear_graphql tool)', () => {
  it('answers one operation with its data, checked by the stand-in against the schema', async () => {
    await expect(writer().graphql?.('query { viewer { id } }', {})).resolves.toEqual({
      viewer: { id: 'user-me' },
    });
  });

  it('reports a query Linear rejects (HTTP 400) as tracker_status, without the key', async () => {
    const error = await failureOf(
      writer().graphql?.('query { viewer { nope } }', {}) ?? Promise.resolve(),
    );
    expect(error.code).toBe('tracker_status');
    expect(error.message).not.toContain(KEY);
  });
});
