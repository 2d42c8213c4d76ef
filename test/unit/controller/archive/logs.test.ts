import { describe, expect, it } from 'vitest';
import { ArchiveError, type ArchiveStore } from '../../../../src/archive/types.js';
import { createLogArchive } from '../../../../src/controller/archive/log-archive.js';
import { createLineSplitter, LINE_CUT_MARKER } from '../../../../src/controller/runtime/client.js';
import type { PodLogSource } from '../../../../src/controller/shared/log-sink.js';
import { openSqliteArchive } from '../../../../src/archive/sqlite.js';
import {
  archivedLogText,
  faultyArchive,
  type FaultyArchive,
} from '../../../support/archive-faults.js';

// The store is a parameter: the lead runs these against the real SQLite and PostgreSQL stores.
// A real store (SQLite in memory), behind a switch for faults and counters of the writes.
const stores: Array<[string, () => Promise<FaultyArchive>]> = [
  ['SQLite', async () => faultyArchive(await openSqliteArchive(':memory:'))],
];

const source: PodLogSource = {
  namespace: 'default',
  podName: 'run-pod',
  podUid: 'pod-uid-1',
  runKey: 'default/run',
  runUid: 'run-uid-1',
  slot: 0,
  attempt: 1,
};

/** Feeds lines as the log follower does: offsets of the log read from its start. */
function feed(sink: (line: string, offset: number) => void, lines: readonly string[]): void {
  let offset = 0;
  for (const line of lines) {
    sink(line, offset);
    offset += Buffer.byteLength(line) + 1;
  }
}

const lines = Array.from({ length: 40 }, (_, index) =>
  JSON.stringify({
    type: 'agent_message_chunk',
    message: { text: `line ${index} ${'x'.repeat(90)}` },
  }),
);
const whole = lines.map((line) => `${line}\n`).join('');

function archiveOn(
  store: ArchiveStore | undefined,
  extra: Partial<Parameters<typeof createLogArchive>[0]> = {},
) {
  return createLogArchive({
    store: () => store,
    capBytes: 32 * 1024 * 1024,
    redact: (_run, text) => text.replaceAll('SECRET-VALUE', '[redacted]'),
    pieceBytes: 1024,
    pieceMs: 10,
    ...extra,
  });
}

describe.each(stores)('the Pod log archive on %s', (_name, makeStore) => {
  it('appends the log in pieces at their offsets, whole', async () => {
    const store = await makeStore();
    const logs = archiveOn(store);
    feed((line, offset) => logs.line(source, line, offset), lines);
    await logs.flushRun(source.runUid);
    expect(await archivedLogText(store, source.runUid)).toBe(whole);
    expect(store.calls.appendLog).toBeGreaterThan(1);
    logs.stop();
  });

  it('keeps each piece once when the log is read again, in this process or after a restart', async () => {
    const store = await makeStore();
    const first = archiveOn(store);
    // A restart mid-log: the first process read 25 lines; its pieces were cut on time.
    feed((line, offset) => first.line(source, line, offset), lines.slice(0, 25));
    await first.flushRun(source.runUid);
    // Read again from the start in the same process (a cut stream): nothing new.
    const before = store.calls.appendLog;
    feed((line, offset) => first.line(source, line, offset), lines.slice(0, 25));
    await first.flushRun(source.runUid);
    expect(store.calls.appendLog).toBe(before);
    first.stop();
    // A new process reads the whole log from the start, cutting its pieces elsewhere.
    const second = archiveOn(store, { pieceBytes: 3000 });
    feed((line, offset) => second.line(source, line, offset), lines);
    await second.flushRun(source.runUid);
    expect(await archivedLogText(store, source.runUid)).toBe(whole);
    expect(store.repeatedPieces).toBe(0);
    second.stop();
  });

  it('redacts what it writes and parses the records an attempt needs', async () => {
    const store = await makeStore();
    const logs = archiveOn(store);
    const records = [
      JSON.stringify({
        type: 'hook_execution',
        message: { status: 'started', hookName: 'before_run', command: 'x', cwd: '/', slot: 0 },
      }),
      JSON.stringify({
        type: 'hook_execution',
        message: {
          status: 'completed',
          hookName: 'before_run',
          command: 'x',
          cwd: '/',
          slot: 0,
          exitCode: 0,
          output: 'SECRET-VALUE',
        },
      }),
      JSON.stringify({
        type: 'git_workspace',
        message: {
          step: 'clone',
          status: 'completed',
          branch: 'lorenz/eng-1',
          detail: 'cloned',
          durationMs: 1,
          slot: 0,
        },
      }),
      JSON.stringify({
        type: 'git_workspace',
        message: {
          step: 'push',
          status: 'completed',
          branch: 'lorenz/eng-1',
          detail: 'pushed 2 commits to lorenz/eng-1',
          durationMs: 1,
          slot: 0,
          commits: [
            { sha: 'b'.repeat(40), subject: 'Fix the login form' },
            { sha: 'a'.repeat(40), subject: 'Add a failing test' },
          ],
        },
      }),
      JSON.stringify({
        type: 'turn_completed',
        message: { turn: 2, usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } },
      }),
    ];
    feed((line, offset) => logs.line(source, line, offset), records);
    // Read again: the records are not counted twice.
    feed((line, offset) => logs.line(source, line, offset), records);
    await logs.flushRun(source.runUid);
    const text = await archivedLogText(store, source.runUid);
    expect(text).not.toContain('SECRET-VALUE');
    expect(text).toContain('[redacted]');
    expect(logs.facts(source.podUid)).toMatchObject({
      hooks: [{ status: 'started' }, { status: 'completed', exitCode: 0 }],
      gitBranch: 'lorenz/eng-1',
      // Once, though the log was read twice.
      pushedCommits: [
        `${'b'.repeat(40)} Fix the login form`,
        `${'a'.repeat(40)} Add a failing test`,
      ],
      turns: 2,
      usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
    });
    logs.stop();
  });

  it('holds the pieces while the store is down and writes them once it is back', async () => {
    const store = await makeStore();
    store.fail = new ArchiveError('archive_unavailable', 'down');
    const failures: unknown[] = [];
    const logs = archiveOn(store, { onFailure: (error) => failures.push(error) });
    feed((line, offset) => logs.line(source, line, offset), lines);
    await expect(logs.flushRun(source.runUid)).rejects.toMatchObject({
      code: 'archive_unavailable',
    });
    expect(failures.length).toBeGreaterThan(0);
    store.fail = undefined;
    await logs.flushRun(source.runUid);
    expect(await archivedLogText(store, source.runUid)).toBe(whole);
    logs.stop();
  });

  it('bounds what waits for a store that is down: the head and the newest are kept', async () => {
    const store = await makeStore();
    store.fail = new ArchiveError('archive_unavailable', 'down');
    let dropped = 0;
    const logs = archiveOn(store, {
      capBytes: 2048,
      maxPendingBytes: 2500,
      onDropped: (bytes) => (dropped += bytes),
    });
    feed((line, offset) => logs.line(source, line, offset), lines);
    await expect(logs.flushRun(source.runUid)).rejects.toThrow();
    store.fail = undefined;
    await logs.flushRun(source.runUid);
    const text = await archivedLogText(store, source.runUid);
    expect(dropped).toBeGreaterThan(0);
    expect(text.startsWith(`${lines[0]}\n`)).toBe(true);
    expect(text.endsWith(`${lines.at(-1)}\n`)).toBe(true);
    logs.stop();
  });

  it('writes nothing while no store is open, and everything once one is', async () => {
    const open: { store?: FaultyArchive } = {};
    const logs = createLogArchive({
      store: () => open.store,
      capBytes: 1 << 20,
      redact: (_run, text) => text,
      pieceBytes: 1024,
      pieceMs: 10,
    });
    feed((line, offset) => logs.line(source, line, offset), lines);
    await expect(logs.flushRun(source.runUid)).rejects.toMatchObject({
      code: 'archive_unavailable',
    });
    const store = await makeStore();
    open.store = store;
    await logs.flushRun(source.runUid);
    expect(await archivedLogText(store, source.runUid)).toBe(whole);
    logs.stop();
  });
});

describe('the line splitter of log streams', () => {
  it.each([
    { name: 'short lines', chunks: ['a\nb', 'c\n\n d \n'], max: 10, expected: ['a', 'bc', 'd'] },
    {
      name: 'a line past the limit in one chunk',
      chunks: ['0123456789abcdef\nnext\n'],
      max: 10,
      expected: [`0123456789${LINE_CUT_MARKER}`, 'next'],
    },
    {
      name: 'a line past the limit over many chunks, never held whole',
      chunks: ['01234', '56789ab', 'cdef', 'ghij\nnext'],
      max: 10,
      expected: [`0123456789${LINE_CUT_MARKER}`, 'next'],
    },
  ])('$name', ({ chunks, max, expected }) => {
    const seen: string[] = [];
    const splitter = createLineSplitter((line) => seen.push(line), max);
    for (const chunk of chunks) splitter.push(chunk);
    splitter.end();
    expect(seen).toEqual(expected);
  });

  it('holds at most the limit of a 200 MB line', () => {
    let longest = 0;
    const seen: string[] = [];
    const splitter = createLineSplitter((line) => seen.push(line), 1024 * 1024);
    const chunk = 'x'.repeat(64 * 1024);
    for (let sent = 0; sent < 200 * 1024 * 1024; sent += chunk.length) {
      splitter.push(chunk);
      longest = Math.max(longest, ...seen.map((line) => line.length));
    }
    splitter.push('\ndone\n');
    expect(seen.map((line) => line.length)).toEqual([1024 * 1024 + LINE_CUT_MARKER.length, 4]);
    expect(longest).toBeLessThanOrEqual(1024 * 1024 + LINE_CUT_MARKER.length);
  });
});
