// The tools gateway end to end over HTTP with the MCP SDK's client (harness in
// fakes/tools-gateway.ts): the tools, scoping, argument and state refusals, tracker failures.
import { describe, expect, it } from 'vitest';
import { LorenzError } from '../../../src/workflow/errors.js';
import { KEY, call, connect, start, useToolsHarness } from '../../support/fakes/tools-gateway.js';

useToolsHarness();

describe('tools/list', () => {
  it.each([
    [
      false,
      [
        'tracker_comment',
        'tracker_list_comments',
        'tracker_read_issue',
        'tracker_update_comment',
        'tracker_update_state',
      ],
    ],
    [
      true,
      [
        'tracker_comment',
        'tracker_create_issue',
        'tracker_list_comments',
        'tracker_read_issue',
        'tracker_update_comment',
        'tracker_update_state',
      ],
    ],
  ])('createIssue %s offers exactly these tools', async (createIssue, names) => {
    const h = await start({ createIssue });
    const { tools } = await (await connect(h)).listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(names);
    const comment = tools.find((tool) => tool.name === 'tracker_comment');
    expect(comment?.inputSchema.required).toEqual(['body']);
    expect(h.records).toEqual([]);
  });
});

describe('linear_graphql', () => {
  it.each([
    ['a linear Workflow that opted in', { linearGraphql: true }, true],
    ['a linear Workflow that did not', { linearGraphql: false }, false],
    ['another tracker, even opted in', { linearGraphql: true, trackerKind: 'github' }, false],
  ])('is offered to %s: %s', async (_name, run, offered) => {
    const h = await start(run);
    const { tools } = await (await connect(h)).listTools();
    expect(tools.some((tool) => tool.name === 'linear_graphql')).toBe(offered);
  });

  it('passes one operation and its variables through, and records it', async () => {
    const h = await start({ linearGraphql: true });
    const result = await call(await connect(h), 'linear_graphql', {
      query: 'query { viewer { id } }',
      variables: { first: 1 },
    });
    expect(result).toEqual({ isError: false, text: expect.stringContaining('user-me') as unknown });
    expect(h.writer.writes).toEqual(['graphql query { viewer { id } } {"first":1}']);
    expect(h.records.map((record) => `${record.tool} ${record.target} ${record.ok}`)).toEqual([
      'linear_graphql (graphql) true',
    ]);
  });
});

describe('each tool against the writer', () => {
  it.each([
    ['tracker_read_issue', {}, /"identifier":"ENG-42"/, null],
    ['tracker_read_issue', { issue_id: 'eng-42' }, /"id":"uuid-42"/, null],
    ['tracker_list_comments', { issue_id: 'uuid-42' }, /"id":"c1"/, null],
    ['tracker_comment', { body: 'Done: see PR' }, /"id":"c2"/, 'comment uuid-42 Done: see PR'],
    [
      'tracker_update_comment',
      { comment_id: 'c1', body: 'edited' },
      /"edited"/,
      'updateComment uuid-42 c1 edited',
    ],
    [
      'tracker_update_state',
      { state: ' in review ' },
      /"state":"In Review"/,
      'updateState uuid-42 In Review',
    ],
    ['tracker_update_state', { state: 'done' }, /"state":"Done"/, 'updateState uuid-42 Done'],
    [
      'tracker_create_issue',
      { title: 'Follow-up', state: 'todo' },
      /"identifier":"ENG-43"/,
      'createIssue Follow-up Todo',
    ],
  ])('%s %j', async (tool, args, answer, write) => {
    const h = await start({ createIssue: true });
    const result = await call(await connect(h), tool, args);
    expect(result).toEqual({ isError: false, text: expect.stringMatching(answer) });
    expect(h.writer.writes).toEqual(write === null ? [] : [write]);
    const target = tool === 'tracker_create_issue' ? 'ENG-43' : 'ENG-42';
    expect(h.records).toEqual([
      { namespace: 'team-a', run: 'app-eng-42', uid: 'uid-1', attempt: 1, tool, target, ok: true },
    ]);
  });
});

describe('refusals are tool errors, and nothing is written', () => {
  it.each([
    [
      'another issue',
      'tracker_comment',
      { issue_id: 'ENG-7', body: 'x' },
      /only touch its own issue.*ENG-7/,
    ],
    [
      'another issue by id',
      'tracker_update_state',
      { issue_id: 'uuid-7', state: 'Done' },
      /own issue/,
    ],
    [
      'a state not allowed',
      'tracker_update_state',
      { state: 'Cancelled' },
      /"Cancelled" is not allowed; allowed: Todo, In Progress, Done, In Review/,
    ],
    ['a missing field', 'tracker_comment', {}, /expected string, received undefined at body$/],
    [
      'a field of the wrong type',
      'tracker_update_state',
      { state: 5 },
      /received number at state$/,
    ],
    ['an empty comment', 'tracker_comment', { body: '   ' }, />=1 characters at body$/],
    [
      'a create state not allowed',
      'tracker_create_issue',
      { title: 't', state: 'Cancelled' },
      /not allowed/,
    ],
    [
      'create when not allowed',
      'tracker_create_issue',
      { title: 't' },
      /Tool tracker_create_issue not found/,
    ],
    ['an unknown tool', 'tracker_delete_issue', {}, /Tool tracker_delete_issue not found/],
  ])('%s', async (_case, tool, args, message) => {
    const h = await start({ createIssue: _case.startsWith('a create') });
    const result = await call(await connect(h), tool, args);
    expect(result).toEqual({ isError: true, text: expect.stringMatching(message) });
    expect(h.writer.writes).toEqual([]);
    expect(h.records).toEqual([expect.objectContaining({ tool, ok: false })]);
  });

  it('takes the allowed states from the resolver when it names them', async () => {
    const h = await start({ allowedStates: ['Done'] });
    const client = await connect(h);
    expect(await call(client, 'tracker_update_state', { state: 'In Review' })).toEqual({
      isError: true,
      text: 'state "In Review" is not allowed; allowed: Done',
    });
    expect((await call(client, 'tracker_update_state', { state: 'DONE' })).isError).toBe(false);
    expect(h.writer.writes).toEqual(['updateState uuid-42 Done']);
  });

  it('records the issue a refused call aimed at', async () => {
    const h = await start();
    await call(await connect(h), 'tracker_read_issue', { issue_id: 'ENG-7' });
    expect(h.records).toEqual([expect.objectContaining({ target: 'ENG-7', ok: false })]);
  });
});

describe('tracker failures', () => {
  it.each([
    [
      new LorenzError('tracker_status', `401 for key ${KEY}`, { status: 401 }),
      /tracker_status, HTTP 401/,
    ],
    [
      new LorenzError('tracker_rate_limited', `slow down ${KEY}`, { status: 429 }),
      /tracker_rate_limited, HTTP 429/,
    ],
    [new LorenzError('invalid_tracker_config', `no state; key ${KEY}`), /invalid_tracker_config:/],
    [new Error(`fetch https://api.example.com/?key=${KEY} failed`), /tracker call failed/],
  ])('%s → a tool error with the code, never the key', async (error, message) => {
    const h = await start();
    h.writer.failWith = error;
    const client = await connect(h);
    for (const [tool, args] of [
      ['tracker_comment', { body: 'x' }],
      ['tracker_update_state', { state: 'Done' }],
      ['tracker_read_issue', {}],
    ] as const) {
      const result = await call(client, tool, args);
      expect(result).toEqual({ isError: true, text: expect.stringMatching(message) });
      expect(result.text).not.toContain(KEY);
    }
    expect(h.records.map((record) => record.ok)).toEqual([false, false, false]);
  });

  it('a tracker that cannot write is a tool error', async () => {
    const h = await start({}, {}, { trackerFor: () => null });
    const result = await call(await connect(h), 'tracker_comment', { body: 'x' });
    expect(result).toEqual({ isError: true, text: 'the linear tracker cannot be changed' });
  });
});

/** A raw POST, to see the HTTP status a client gets before any MCP exchange. */
