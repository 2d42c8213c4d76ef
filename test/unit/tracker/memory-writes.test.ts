// The `memory` tracker's writer: comments and state changes kept in the adapter instance.
import { describe, expect, it } from 'vitest';
import { createMemoryTracker } from '../../../src/tracker/memory.js';
import type { TrackerAdapter, TrackerWriter } from '../../../src/tracker/types.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import { failureOf } from '../../support/lorenz-errors.js';

const STATES = { activeStates: ['Todo', 'In Progress'], terminalStates: ['Done', 'Cancelled'] };
const T0 = Date.parse('2026-03-01T10:00:00.000Z');

function board(): { tracker: TrackerAdapter; writer: TrackerWriter } {
  let tick = 0;
  const issues = [
    normalizeIssue({ id: 'id-1', identifier: 'MEM-1', title: 'One', state: 'Todo' }),
    normalizeIssue({ id: 'id-2', identifier: 'MEM-2', title: 'Two', state: 'In Progress' }),
  ];
  const tracker = createMemoryTracker(issues, STATES, {
    now: () => new Date(T0 + 1000 * tick++),
  });
  if (tracker.writer === undefined) throw new Error('memory tracker without a writer');
  return { tracker, writer: tracker.writer };
}

describe('memory tracker writes', () => {
  it.each([['id-1'], ['MEM-1']])('comments on %s and lists the comment back', async (ref) => {
    const { writer } = board();
    const made = await writer.comment(ref, 'first note');
    expect(made).toMatchObject({ id: '1', body: 'first note', author: 'agent' });
    expect(made.created_at).toBe(new Date(T0).toISOString());
    // The other spelling of the same issue sees the same comments.
    expect(await writer.listComments('id-1')).toEqual([made]);
    expect(await writer.listComments('MEM-1')).toEqual([made]);
    expect(await writer.listComments('MEM-2')).toEqual([]);
  });

  it('numbers comments in order across the board', async () => {
    const { writer } = board();
    const ids = [
      (await writer.comment('MEM-1', 'a')).id,
      (await writer.comment('MEM-2', 'b')).id,
      (await writer.comment('MEM-1', 'c')).id,
    ];
    expect(ids).toEqual(['1', '2', '3']);
  });

  it('updates a comment of the issue, and refuses one of another issue', async () => {
    const { writer } = board();
    const mine = await writer.comment('MEM-1', 'draft');
    const theirs = await writer.comment('MEM-2', 'other');
    const updated = await writer.updateComment('MEM-1', mine.id, 'final');
    expect(updated).toMatchObject({ id: mine.id, body: 'final', created_at: mine.created_at });
    expect(updated.updated_at).not.toBe(mine.updated_at);
    expect((await writer.listComments('MEM-1')).map((c) => c.body)).toEqual(['final']);
    const error = await failureOf(writer.updateComment('MEM-1', theirs.id, 'hijack'));
    expect(error.code).toBe('tracker_status');
    expect((await writer.listComments('MEM-2')).map((c) => c.body)).toEqual(['other']);
  });

  it.each([
    ['done', 'Done', 'fetchByStates'],
    ['  in progress ', 'In Progress', 'fetchCandidates'],
    ['In Review', 'In Review', 'fetchByStates'],
  ])('moves an issue to %j and later fetches show %s', async (asked, shown, fetch) => {
    const { tracker, writer } = board();
    const moved = await writer.updateState('MEM-1', asked);
    expect(moved.state).toBe(shown);
    expect((await writer.readIssue('id-1'))?.state).toBe(shown);
    const found =
      fetch === 'fetchCandidates'
        ? await tracker.fetchCandidates()
        : await tracker.fetchByStates([shown]);
    expect(found.map((issue) => issue.identifier)).toContain('MEM-1');
    expect((await tracker.fetchByIds(['MEM-1']))[0]?.state).toBe(shown);
  });

  it('does not change the issues it was built from', async () => {
    const issues = [normalizeIssue({ id: 'x', identifier: 'MEM-9', title: 'x', state: 'Todo' })];
    const tracker = createMemoryTracker(issues, STATES);
    await tracker.writer?.updateState('MEM-9', 'Done');
    expect(issues[0]?.state).toBe('Todo');
  });

  it.each([
    ['comment on a missing issue', (w: TrackerWriter) => w.comment('MEM-7', 'x'), 'tracker_status'],
    ['list a missing issue', (w: TrackerWriter) => w.listComments('MEM-7'), 'tracker_status'],
    ['an empty comment', (w: TrackerWriter) => w.comment('MEM-1', '  '), 'tracker_status'],
    [
      'a missing comment',
      (w: TrackerWriter) => w.updateComment('MEM-1', '9', 'x'),
      'tracker_status',
    ],
    ['an empty state', (w: TrackerWriter) => w.updateState('MEM-1', ' '), 'invalid_tracker_config'],
  ])('refuses %s', async (_name, call, code) => {
    const { writer } = board();
    expect((await failureOf(call(writer))).code).toBe(code);
  });

  it('reads a missing issue as null', async () => {
    expect(await board().writer.readIssue('MEM-7')).toBeNull();
  });
});

describe('memory board blockers', () => {
  it('carry the current state of the board issue they name: a move to Done unblocks', async () => {
    const board = [
      normalizeIssue({ id: 'b1', identifier: 'B-1', title: 'one', state: 'Todo' }),
      normalizeIssue({
        id: 'b2',
        identifier: 'B-2',
        title: 'two',
        state: 'Todo',
        blocked_by: [{ id: 'b1', identifier: 'B-1', state: 'Todo' }],
      }),
    ];
    const tracker = createMemoryTracker(board, { activeStates: ['Todo'] });
    const blockerOf = async () =>
      (await tracker.fetchCandidates()).find((issue) => issue.identifier === 'B-2')?.blocked_by[0]
        ?.state;
    expect(await blockerOf()).toBe('Todo');
    await tracker.writer?.updateState('b1', 'Done');
    expect(await blockerOf()).toBe('Done');
  });
});
