// The `local` board's writer (the agent tools' side): real files in a temp directory, each
// write checked through a second adapter that reads the directory afresh.
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createLocalTracker } from '../../../src/tracker/local/index.js';
import type { TrackerWriter } from '../../../src/tracker/types.js';
import { failureOf } from '../../support/lorenz-errors.js';
import { localBoardPerTest } from './local-board.js';

const ISSUE = '---\nstatus: Todo # triaged\nlabels: [a]\n---\n# Fix it\n\nThe body.\n';
const { board } = localBoardPerTest('local-writes-', { 'BOARD-1.md': ISSUE });
const T0 = Date.parse('2026-02-01T00:00:00.000Z');

function writer(): TrackerWriter {
  let tick = 0;
  const tracker = createLocalTracker({
    directory: board(),
    now: () => new Date(T0 + 1000 * ++tick),
  });
  if (tracker.writer === undefined) throw new Error('local tracker without a writer');
  return tracker.writer;
}

function creator(w: TrackerWriter): NonNullable<TrackerWriter['createIssue']> {
  if (w.createIssue === undefined) throw new Error('local writer without createIssue');
  return w.createIssue.bind(w);
}

/** A second adapter over the same directory: what the next poll would see. */
const fresh = () => createLocalTracker({ directory: board() });
const fileText = () => fs.readFile(join(board(), 'BOARD-1.md'), 'utf8');

describe('local board writes', () => {
  it('comments, and a new adapter lists the comments in order with ids 1, 2', async () => {
    const w = writer();
    const first = await w.comment('BOARD-1', 'Started.');
    const second = await w.comment('BOARD-1', 'Two\nlines');
    expect(first).toEqual({
      id: '1',
      body: 'Started.',
      author: 'agent',
      author_id: null,
      author_email: null,
      created_at: '2026-02-01T00:00:01.000Z',
      updated_at: '2026-02-01T00:00:01.000Z',
    });
    expect(second).toMatchObject({ id: '2', body: 'Two lines' });
    expect(await fresh().writer?.listComments('BOARD-1')).toEqual([first, second]);
  });

  it('comments made at once all land (writes are serialized)', async () => {
    const w = writer();
    const made = await Promise.all(['a', 'b', 'c', 'd'].map((text) => w.comment('BOARD-1', text)));
    expect(made.map((c) => c.id).sort()).toEqual(['1', '2', '3', '4']);
    const listed = await fresh().writer?.listComments('BOARD-1');
    expect(listed?.map((c) => c.body)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('updates a comment in place, keeping its time and the other lines', async () => {
    const w = writer();
    await w.comment('BOARD-1', 'one');
    const two = await w.comment('BOARD-1', 'two');
    await w.comment('BOARD-1', 'three');
    const updated = await w.updateComment('BOARD-1', '2', 'two, revised');
    expect(updated).toEqual({ ...two, body: 'two, revised' });
    const listed = await fresh().writer?.listComments('BOARD-1');
    expect(listed?.map((c) => c.body)).toEqual(['one', 'two, revised', 'three']);
    expect(await fileText()).toContain('The body.\n\n<!-- lorenz:comments -->');
  });

  it.each([
    ['done', 'Done', 'Done'],
    ['  in progress ', 'In Progress', 'In Progress'],
    // Not a configured state: written as asked; the board counts it as backlog.
    ['In Review', 'In Review', 'Backlog'],
  ])('updateState(%j) writes status %j; a new adapter reads %j', async (asked, written, read) => {
    const moved = await writer().updateState('BOARD-1', asked);
    expect(moved.state).toBe(read);
    const text = await fileText();
    expect(text).toContain(`status: ${written}`);
    expect(text).toContain('labels: [ a ]');
    expect(text.endsWith('# Fix it\n\nThe body.\n')).toBe(true);
    expect((await fresh().fetchByIds(['BOARD-1']))[0]?.state).toBe(read);
    expect((await fresh().writer?.readIssue('BOARD-1'))?.state).toBe(read);
  });

  it.each([
    ['renames over the file', (w: TrackerWriter) => w.comment('BOARD-1', 'x')],
    ['renames on a state change', (w: TrackerWriter) => w.updateState('BOARD-1', 'Done')],
  ])('%s through a dot-file temp, leaving none behind', async (_name, call) => {
    const w = writer();
    await w.comment('BOARD-1', 'seed');
    const before = await fs.stat(join(board(), 'BOARD-1.md'));
    const renames: string[] = [];
    const rename = fs.rename.bind(fs);
    const spy = vi.spyOn(fs, 'rename').mockImplementation(async (from, to) => {
      renames.push(String(from));
      await rename(from, to);
    });
    try {
      await call(w);
    } finally {
      spy.mockRestore();
    }
    expect(renames).toHaveLength(1);
    expect(renames[0]).toMatch(/\/\.BOARD-1\.md\.[0-9a-f-]+\.tmp$/);
    expect(await fs.readdir(board())).toEqual(['BOARD-1.md']);
    expect((await fs.stat(join(board(), 'BOARD-1.md'))).ino).not.toBe(before.ino);
  });

  it.each([
    ['a missing issue', (w: TrackerWriter) => w.comment('BOARD-9', 'x'), 'tracker_status'],
    ['a path-like id', (w: TrackerWriter) => w.updateState('../BOARD-1', 'Done'), 'tracker_status'],
    ['an empty comment', (w: TrackerWriter) => w.comment('BOARD-1', ' \n '), 'tracker_status'],
    [
      'a missing comment',
      (w: TrackerWriter) => w.updateComment('BOARD-1', '3', 'x'),
      'tracker_status',
    ],
    [
      'a comment id not a number',
      (w: TrackerWriter) => w.updateComment('BOARD-1', 'c1', 'x'),
      'tracker_status',
    ],
    ['an empty state', (w: TrackerWriter) => w.updateState('BOARD-1', ' '), 'tracker_status'],
    ['listing a missing issue', (w: TrackerWriter) => w.listComments('BOARD-9'), 'tracker_status'],
  ])('refuses %s and leaves the file alone', async (_name, call, code) => {
    const w = writer();
    expect((await failureOf(call(w))).code).toBe(code);
    expect(await fileText()).toBe(ISSUE);
  });

  it('creates issues with the next free numbers, visible to a new adapter', async () => {
    await fs.writeFile(join(board(), 'BOARD-7.md'), '# Seven\n');
    const create = creator(writer());
    const created = await Promise.all([
      create({ title: 'Follow-up', description: 'Found in BOARD-1.', state: 'todo' }),
      create({ title: 'Another' }),
    ]);
    expect(created.map((issue) => issue?.identifier)).toEqual(['BOARD-8', 'BOARD-9']);
    expect(created[0]).toMatchObject({
      title: 'Follow-up',
      description: 'Found in BOARD-1.',
      state: 'Todo',
      created_at: '2026-02-01T00:00:01.000Z',
    });
    expect(created[1]?.state).toBe('Backlog');
    const candidates = await fresh().fetchCandidates();
    expect(candidates.map((issue) => issue.identifier)).toEqual(['BOARD-1', 'BOARD-8']);
    expect((await fs.readdir(board())).sort()).toEqual([
      'BOARD-1.md',
      'BOARD-7.md',
      'BOARD-8.md',
      'BOARD-9.md',
    ]);
  });

  it('never overwrites an issue another writer created first', async () => {
    // Two adapters over one directory, each with its own write queue.
    const [a, b] = [creator(writer()), creator(writer())];
    const made = await Promise.all(
      Array.from({ length: 6 }, (_, n) => (n % 2 ? a : b)({ title: `n${n}` })),
    );
    const ids = made.map((issue) => issue?.identifier);
    expect(new Set(ids).size).toBe(6);
    const titles = (await fresh().fetchByStates(['Backlog'])).map((issue) => issue.title);
    expect(titles.sort()).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5']);
  });

  it('reads a missing issue as null', async () => {
    expect(await writer().readIssue('BOARD-9')).toBeNull();
  });

  it('reads a ConfigMap board but refuses to write it, naming why', async () => {
    const text = `${ISSUE}\n<!-- lorenz:comments -->\n## Comments\n\n- 2026-01-01T00:00:00.000Z agent: hi\n`;
    const w = createLocalTracker({ files: { 'BOARD-1.md': text } }).writer;
    expect((await w?.readIssue('BOARD-1'))?.title).toBe('Fix it');
    expect((await w?.listComments('BOARD-1'))?.map((c) => c.body)).toEqual(['hi']);
    for (const call of [
      () => w?.comment('BOARD-1', 'x'),
      () => w?.updateComment('BOARD-1', '1', 'x'),
      () => w?.updateState('BOARD-1', 'Done'),
      () => w?.createIssue?.({ title: 'x' }),
    ]) {
      const error = await failureOf(Promise.resolve(call()));
      expect(error.code).toBe('invalid_tracker_config');
      expect(error.message).toMatch(/ConfigMap.*read-only/);
    }
  });
});
