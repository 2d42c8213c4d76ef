// Comments on the memory board: `tracker.issues[].comments` in WORKFLOW.md, validated at load
// and listed by the memory adapter before its own writes, so a test or a demo can answer the
// agent's inbox with `kubectl apply` alone.
import { describe, expect, it } from 'vitest';
import { createTracker } from '../../../src/tracker/index.js';
import type { TrackerWriter } from '../../../src/tracker/types.js';
import { type WorkflowConfig, configProblems, parseConfig } from '../../../src/workflow/config.js';
import { LorenzError } from '../../../src/workflow/errors.js';

function config(issues: unknown[]): WorkflowConfig {
  return parseConfig({ tracker: { kind: 'memory', issues } }).config;
}

/** The adapter the controller makes of a Workflow's config (src/tracker/index.ts). */
function writerOf(parsed: WorkflowConfig): TrackerWriter {
  const tracker = createTracker(parsed);
  if (tracker.writer === undefined) throw new Error('memory tracker without a writer');
  return tracker.writer;
}

function loadError(issues: unknown[]): LorenzError {
  try {
    config(issues);
  } catch (error) {
    if (error instanceof LorenzError) return error;
    throw error;
  }
  throw new Error('expected the board to be refused');
}

const ISSUE = { id: 'id-1', identifier: 'MEM-1', title: 'One', state: 'Todo' };

describe('memory board comments', () => {
  it('lists the board comments first, oldest first, then the adapter writes', async () => {
    const parsed = config([
      {
        ...ISSUE,
        comments: [
          { author: 'bob', body: 'later', created_at: '2026-03-01T09:00:00Z' },
          {
            author: 'alice',
            body: '/approve',
            author_id: 1234,
            author_email: 'alice@acme.io',
            created_at: '2026-03-01T08:00:00Z',
            id: 'c-1',
          },
        ],
      },
      { id: 'id-2', identifier: 'MEM-2', title: 'Two', state: 'Todo' },
    ]);
    const writer = writerOf(parsed);
    const mine = await writer.comment('MEM-1', 'A request.');
    const listed = await writer.listComments('id-1');
    expect(listed.map((comment) => [comment.author, comment.body])).toEqual([
      ['alice', '/approve'],
      ['bob', 'later'],
      ['agent', 'A request.'],
    ]);
    expect(listed[0]).toEqual({
      id: 'c-1',
      body: '/approve',
      author: 'alice',
      author_id: '1234',
      author_email: 'alice@acme.io',
      created_at: '2026-03-01T08:00:00Z',
      updated_at: '2026-03-01T08:00:00Z',
    });
    expect(listed[2]).toEqual(mine);
    expect(await writer.listComments('MEM-2')).toEqual([]);
  });

  it('an id left out is a stable hash; a time left out is when the board was read', async () => {
    const issues = [{ ...ISSUE, comments: [{ author: 'alice', body: '/approve' }] }];
    const before = Date.now();
    const [first] = await writerOf(config(issues)).listComments('MEM-1');
    const [again] = await writerOf(config(issues)).listComments('MEM-1');
    expect(first?.id).toMatch(/^board-[0-9a-f]{20}$/);
    expect(again?.id).toBe(first?.id);
    expect(Date.parse(first?.created_at ?? '')).toBeGreaterThanOrEqual(before);
    expect(first).toMatchObject({ author_id: null, author_email: null });
    // Another body, author or place is another comment.
    const other = [{ ...ISSUE, comments: [{ author: 'alice', body: '/deny' }] }];
    const [changed] = await writerOf(config(other)).listComments('MEM-1');
    expect(changed?.id).not.toBe(first?.id);
  });

  it("a board comment is not the agent's to edit", async () => {
    const parsed = config([{ ...ISSUE, comments: [{ author: 'alice', body: 'x', id: 'c-9' }] }]);
    const writer = writerOf(parsed);
    const error = await writer.updateComment('MEM-1', 'c-9', '/approve').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(LorenzError);
    expect((error as LorenzError).message).toMatch(/c-9 of MEM-1 is the board's/);
    expect((await writer.listComments('MEM-1'))[0]?.body).toBe('x');
  });

  it('a change of the comments makes a new config (the adapter cache reads the board anew)', () => {
    const one = config([{ ...ISSUE, comments: [] }]);
    const two = config([{ ...ISSUE, comments: [{ author: 'alice', body: '/approve' }] }]);
    expect(one.tracker.issueComments).toEqual([[]]);
    expect(JSON.stringify(one.tracker)).not.toBe(JSON.stringify(two.tracker));
    // The issue itself never carries its comments (spec.issue, templates).
    expect(two.tracker.issues[0]).not.toHaveProperty('comments');
  });

  it.each<[string, unknown, string]>([
    ['not a list', 'hi', 'tracker.issues[0].comments: must be a list of comments'],
    ['not a map', ['hi'], 'tracker.issues[0].comments[0]: must be a map with author and body'],
    ['no body', [{ author: 'a' }], 'tracker.issues[0].comments[0].body: is required'],
    [
      'an empty body',
      [
        { author: 'a', body: 'ok' },
        { author: 'a', body: '  ' },
      ],
      'tracker.issues[0].comments[1].body: must be a non-empty string',
    ],
    ['no author', [{ body: 'x' }], 'tracker.issues[0].comments[0].author: is required'],
    [
      'an author that is a map',
      [{ author: { name: 'a' }, body: 'x' }],
      'tracker.issues[0].comments[0].author: must be a non-empty string',
    ],
    [
      'a time without a zone',
      [{ author: 'a', body: 'x', created_at: '2026-03-01 10:00' }],
      'tracker.issues[0].comments[0].created_at: must be an RFC 3339 time with a zone',
    ],
    [
      'an unknown key',
      [{ author: 'a', body: 'x', user: 'b' }],
      'tracker.issues[0].comments[0].user: is not a comment key',
    ],
    [
      'a body over 64 KiB',
      [{ author: 'a', body: 'x'.repeat(70_000) }],
      'tracker.issues[0].comments[0].body: must be at most 65536 characters',
    ],
  ])('refuses %s, naming the key', (_, comments, message) => {
    const error = loadError([{ ...ISSUE, comments }]);
    expect(error.code).toBe('invalid_workflow_config');
    expect(error.message).toContain(message);
  });

  it('lists every bad comment of the board at once', () => {
    const error = loadError([
      { ...ISSUE, comments: [{ author: 'a' }] },
      { id: 'id-2', identifier: 'MEM-2', title: 'Two', comments: [{ body: 'x' }] },
    ]);
    expect(configProblems(error).map((problem) => problem.path)).toEqual([
      'tracker.issues[0].comments[0].body',
      'tracker.issues[1].comments[0].author',
    ]);
  });
});
