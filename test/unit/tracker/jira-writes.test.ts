// The jira adapter's writer (the agent tools' side) against the Jira Cloud stand-in, which
// speaks REST v3's documented shapes and applies the writes it is sent.
import { describe, expect, it } from 'vitest';
import { textToAdf } from '../../../src/tracker/jira/index.js';
import type { TrackerAdapter, TrackerWriter } from '../../../src/tracker/types.js';
import { paragraphs } from '../../support/fakes/jira-data.js';
import { type JiraFault, type JiraStandIn } from '../../support/fakes/jira-server.js';
import { failureOf, errorText } from '../../support/lorenz-errors.js';
import { jiraStandInPerFile, jiraTrackerOf } from '../../support/fakes/jira-per-file.js';
import { eachNamedCase } from '../../support/cases.js';

const EMAIL = 'agent@acme.test';
const TOKEN = 'ATATT3xFfGF0-jira-writer-token-never-in-errors-42';
const BASIC = Buffer.from(`${EMAIL}:${TOKEN}`).toString('base64');

let standIn: JiraStandIn;
jiraStandInPerFile(EMAIL, TOKEN, (started) => (standIn = started));

const tracker = (options: { timeoutMs?: number } = {}): TrackerAdapter =>
  jiraTrackerOf(standIn, EMAIL, TOKEN, options);

function writer(options: { timeoutMs?: number } = {}): TrackerWriter {
  const found = tracker(options).writer;
  if (found === undefined) throw new Error('the jira adapter has no writer');
  return found;
}

describe('jira writer: ADF bodies', () => {
  eachNamedCase('%s', textToAdf, [
    ['one line', 'Hello', paragraphs('Hello')],
    ['blank lines split paragraphs', 'One\n\nTwo\r\n\r\nThree', paragraphs('One', 'Two', 'Three')],
    [
      'single newlines are hard breaks',
      'a\nb',
      {
        type: 'doc',
        version: 1,
        content: [
          {
            type: 'paragraph',
            content: [
              { type: 'text', text: 'a' },
              { type: 'hardBreak' },
              { type: 'text', text: 'b' },
            ],
          },
        ],
      },
    ],
    ['nothing but blanks', ' \n\n ', { type: 'doc', version: 1, content: [] }],
  ]);
});

describe('jira writer: reading', () => {
  it.each([
    ['by key', 'ENG-2', 'In Progress'],
    ['by id', '10001', 'Todo'],
    ['a key of another project (no scope on reads of one issue)', 'OPS-6', 'Todo'],
  ])('reads an issue %s', async (_, id, state) => {
    expect((await writer().readIssue(id))?.state).toBe(state);
  });

  it('an issue Jira does not have is null', async () => {
    expect(await writer().readIssue('ENG-404')).toBeNull();
  });
});

describe('jira writer: comments', () => {
  it('a comment is posted as ADF and shows in listComments as text', async () => {
    const w = writer();
    const posted = await w.comment('ENG-1', 'Starting.\n\nPlan: fix the redirect.');
    expect(posted).toMatchObject({
      body: 'Starting.\n\nPlan: fix the redirect.',
      author: 'Agent Bot',
    });
    const sent = standIn.requests.find((r) => r.method === 'POST' && r.path.endsWith('/comment'));
    expect(sent?.path).toBe('/rest/api/3/issue/ENG-1/comment');
    expect(sent?.body).toEqual({ body: paragraphs('Starting.', 'Plan: fix the redirect.') });
    expect(sent?.authorization).toBe(`Basic ${BASIC}`);
    await w.comment('ENG-2', 'elsewhere');
    expect(await w.listComments('ENG-1')).toEqual([posted]);
  });

  it('listComments walks startAt pages', async () => {
    const w = writer();
    for (let n = 1; n <= 5; n += 1) await w.comment('10001', `c${n}`);
    standIn.commentPageCap = 2;
    standIn.requests = [];
    const listed = await w.listComments('ENG-1');
    expect(listed.map((comment) => comment.body)).toEqual(['c1', 'c2', 'c3', 'c4', 'c5']);
    expect(standIn.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
  });

  it('updateComment changes the body through PUT on the issue', async () => {
    const w = writer();
    const posted = await w.comment('ENG-1', 'draft');
    const edited = await w.updateComment('ENG-1', posted.id, 'final');
    expect(edited).toMatchObject({ id: posted.id, body: 'final' });
    expect((await w.listComments('ENG-1')).map((comment) => comment.body)).toEqual(['final']);
    expect(standIn.requests.at(-2)).toMatchObject({
      method: 'PUT',
      path: `/rest/api/3/issue/ENG-1/comment/${posted.id}`,
    });
  });

  it.each([
    ['a comment of another issue', async (w: TrackerWriter) => (await w.comment('ENG-2', 'x')).id],
    ['an id that is not a number', () => Promise.resolve('../../2')],
  ])('updateComment cannot reach %s', async (_, idOf) => {
    const w = writer();
    const id = await idOf(w);
    const error = await failureOf(w.updateComment('ENG-1', id, 'hijacked'));
    expect(error.code).toBe('tracker_status');
    expect(error.detail).toMatchObject({ status: 404 });
    expect(standIn.comments.map((comment) => comment.body)).not.toContainEqual(
      paragraphs('hijacked'),
    );
  });
});

describe('jira writer: state through transitions', () => {
  it.each([
    ['Todo → In Progress', 'ENG-1', 'in progress', 'In Progress'],
    ['In Progress → Done', 'ENG-2', ' DONE ', 'Done'],
    ['Review → Todo', 'ENG-4', 'Todo', 'Todo'],
  ])('%s, and the next fetch shows it', async (_, id, state, expected) => {
    const t = tracker();
    const moved = await t.writer?.updateState(id, state);
    expect(moved?.state).toBe(expected);
    expect((await t.fetchByIds([id]))[0]?.state).toBe(expected);
    const post = standIn.requests.find(
      (r) => r.path.endsWith('/transitions') && r.method === 'POST',
    );
    expect(post?.body).toEqual({ transition: { id: expect.stringMatching(/^\d+$/) as unknown } });
  });

  it.each([
    ['a status the site lacks', 'ENG-1', 'Shipped'],
    ['a status not reachable from here', 'ENG-1', 'Done'],
    ['an empty name', 'ENG-1', '  '],
  ])('%s is invalid_tracker_config naming the reachable ones', async (_, id, state) => {
    const error = await failureOf(writer().updateState(id, state));
    expect(error.code).toBe('invalid_tracker_config');
    expect(error.message).toContain(JSON.stringify(state.trim()));
    expect(error.message).toMatch(/reachable: To Do, In Progress, Review$/);
    expect(standIn.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });
});

describe('jira writer: createIssue', () => {
  it.each<[string, string | null, string]>([
    ['in the initial status', null, 'Todo'],
    ['then moved to a named status', 'In Progress', 'In Progress'],
  ])('%s', async (_, state, expected) => {
    const created = await writer().createIssue?.({
      title: 'Follow-up',
      description: 'Details\n\nMore',
      state,
    });
    expect(created).toMatchObject({ identifier: 'ENG-6', title: 'Follow-up', state: expected });
    expect(created?.description).toBe('Details\n\nMore');
    const post = standIn.requests.find((r) => r.path === '/rest/api/3/issue');
    expect(post?.body).toEqual({
      fields: {
        project: { key: 'ENG' },
        summary: 'Follow-up',
        issuetype: { name: 'Task' },
        description: paragraphs('Details', 'More'),
      },
    });
  });
});

describe('jira writer: failures', () => {
  it.each<[string, JiraFault, string, RegExp]>([
    ['401', { kind: 'status', status: 401 }, 'tracker_status', /HTTP 401/],
    ['404', { kind: 'status', status: 404 }, 'tracker_status', /HTTP 404/],
    ['422', { kind: 'status', status: 422 }, 'tracker_status', /HTTP 422/],
    ['429', { kind: 'http-429', retryAfterSeconds: 5 }, 'tracker_rate_limited', /rate-limited/],
    ['500 echoing the credentials', { kind: 'echo-authorization' }, 'tracker_status', /HTTP 500/],
    ['malformed', { kind: 'malformed' }, 'tracker_response', /not JSON/],
    ['timeout', { kind: 'hang' }, 'tracker_request', /did not answer within 200 ms/],
  ])('%s → %s, the token never in the error', async (_, fault, code, message) => {
    const w = writer({ timeoutMs: 200 });
    for (const call of [
      () => w.comment('ENG-1', 'hello'),
      () => w.listComments('ENG-1'),
      () => w.updateState('ENG-1', 'In Progress'),
      // A 404 on a read is an issue that is gone (null), not a failure.
      ...(fault.kind === 'status' && fault.status === 404 ? [] : [() => w.readIssue('ENG-1')]),
    ]) {
      standIn.faults.push(fault);
      const error = await failureOf(call());
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      expect(errorText(error)).not.toContain(TOKEN);
      expect(errorText(error)).not.toContain(BASIC);
    }
  });

  it('a wrong token is the stand-in 401, not a crash', async () => {
    const w = jiraTrackerOf(standIn, EMAIL, 'nope').writer;
    const error = await failureOf(w?.comment('ENG-1', 'x') ?? Promise.resolve());
    expect(error.code).toBe('tracker_status');
    expect(error.detail).toMatchObject({ status: 401 });
  });
});
