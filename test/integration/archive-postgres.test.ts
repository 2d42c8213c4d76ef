// The archive's PostgreSQL store against a real PostgreSQL server (test/support/postgres.ts:
// initdb on loopback, one server for this file): what every store does, and the faults of a
// database on the network: killed mid-write, down, frozen, full, raced by a second replica,
// given a wrong password.
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/archive/migrations/index.js';
import { openPostgresArchive } from '../../src/archive/postgres.js';
import {
  ArchiveError,
  type ArchiveStore,
  type AttemptRecord,
  type EventRecord,
  type LogAppend,
  type LogEntry,
  type RunRecord,
} from '../../src/archive/types.js';
import { PASSWORD_GROUP, startPostgres, type TestPostgres } from '../support/postgres.js';

let server: TestPostgres;
const opened: ArchiveStore[] = [];

beforeAll(async () => {
  server = await startPostgres();
}, 120_000);

afterAll(async () => {
  for (const store of opened) await store.close().catch(() => {});
  await server?.stop();
});

/** A store on `url` (default: the test database), migrated, closed after the file. */
async function open(url = server.url, options = {}): Promise<ArchiveStore> {
  const store = await openPostgresArchive(url, options);
  opened.push(store);
  await store.migrate();
  return store;
}

/** A plain SQL query against the server, as its superuser. */
async function sql(
  text: string,
  values: unknown[] = [],
  database = server.database,
): Promise<pg.QueryResultRow[]> {
  const client = new pg.Client({
    host: server.host,
    port: server.port,
    user: 'postgres',
    database,
  });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** A fresh, empty database on the server; its URL. */
async function freshDatabase(name: string): Promise<string> {
  await sql(`CREATE DATABASE ${name}`, [], 'postgres');
  return server.url.replace(/\/[^/]+$/, `/${name}`);
}

const usage = (n: number) => ({ inputTokens: n, outputTokens: 2 * n, totalTokens: 3 * n });

function runRecord(over: Partial<RunRecord> & { uid: string }): RunRecord {
  return {
    namespace: 'team-a',
    name: `run-${over.uid}`,
    workflow: 'board',
    issueId: `id-${over.uid}`,
    issueIdentifier: `ENG-${over.uid}`,
    issueTitle: 'Fix the thing',
    phase: 'Succeeded',
    reason: 'IssueCompleted',
    attempts: 1,
    createdAt: '2026-03-01T10:00:00Z',
    usage: usage(1),
    object: { spec: { issue: { id: `id-${over.uid}` } }, status: { phase: 'Succeeded' } },
    ...over,
  };
}

function attemptRecord(over: Partial<AttemptRecord> & { runUid: string }): AttemptRecord {
  return {
    slot: 0,
    attempt: 1,
    podName: 'pod',
    podUid: `pod-${over.runUid}`,
    phase: 'Succeeded',
    turns: 3,
    usage: usage(1),
    hooks: [{ name: 'before_run', exitCode: 0 }],
    ...over,
  };
}

function eventRecord(over: Partial<EventRecord> & { uid: string; runUid: string }): EventRecord {
  return {
    involvedKind: 'IssueRun',
    involvedName: 'run',
    type: 'Normal',
    reason: 'Started',
    message: 'started',
    count: 1,
    firstTime: '2026-03-01T10:00:00Z',
    ...over,
  };
}

/** The pieces of a log of `lines` lines ("<tag> <i>\n"), at their byte offsets. */
function logPieces(
  runUid: string,
  podUid: string,
  tag: string,
  lines: number,
  capBytes: number,
  slot = 0,
  attempt = 1,
): LogAppend[] {
  const pieces: LogAppend[] = [];
  let offset = 0;
  for (let i = 0; i < lines; i += 1) {
    const data = `${tag} ${String(i).padStart(5, '0')}\n`;
    pieces.push({ runUid, podUid, slot, attempt, offset, data, capBytes });
    offset += Buffer.byteLength(data);
  }
  return pieces;
}

async function readAll(store: ArchiveStore, runUid: string, filter = {}): Promise<LogEntry[]> {
  const entries: LogEntry[] = [];
  for await (const entry of store.readLog(runUid, filter)) entries.push(entry);
  return entries;
}

const text = (entries: readonly LogEntry[]) =>
  entries
    .map((e) => (e.kind === 'data' ? e.piece.data : `[elided ${e.bytes} bytes at ${e.offset}]\n`))
    .join('');

async function rejection(promise: Promise<unknown>): Promise<ArchiveError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ArchiveError);
    return error as ArchiveError;
  }
  throw new Error('expected a rejection');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('PostgreSQL archive store: records', () => {
  it('says what it is, and migrating twice changes nothing', async () => {
    const store = await open();
    await store.migrate();
    expect(store.kind).toBe('postgres');
    expect(store.location).toBe(server.url);
    const versions = await sql('SELECT version FROM archive_schema_migrations ORDER BY version');
    expect(versions.map((row) => row.version)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('keeps a run once however often it is written, the last write winning, the record whole', async () => {
    const store = await open();
    const first = runRecord({ uid: 'rec-1', phase: 'Running', reason: undefined });
    const last = runRecord({
      uid: 'rec-1',
      issueTitle: 'NUL \u0000, emoji 🦀, quote " and backslash \\',
      object: { status: { phase: 'Failed', nested: [1, { deep: true }] } },
      phase: 'Failed',
      reason: 'HookFailed',
      branch: 'lorenz/eng-1',
    });
    await store.putRun(first);
    await store.putRun(last);
    await store.putRun(last);
    expect(
      (await sql("SELECT count(*)::int AS n FROM archive_runs WHERE uid = 'rec-1'"))[0]?.n,
    ).toBe(1);
    expect((await store.getRun({ uid: 'rec-1' }))?.run).toEqual(last);
  });

  it('returns a run with its attempts (by slot, attempt) and Events (by time), each kept once', async () => {
    const store = await open();
    await store.putRun(runRecord({ uid: 'rec-2' }));
    const attempts = [
      attemptRecord({ runUid: 'rec-2', slot: 1, attempt: 1 }),
      attemptRecord({
        runUid: 'rec-2',
        slot: 0,
        attempt: 2,
        git: { branch: 'b', pushedCommits: ['abc'] },
      }),
      attemptRecord({
        runUid: 'rec-2',
        slot: 0,
        attempt: 1,
        host: 'worker-1',
        reason: 'AgentFailed',
      }),
    ];
    for (const attempt of [...attempts, ...attempts]) await store.putAttempt(attempt);
    const late = eventRecord({ uid: 'ev-2', runUid: 'rec-2', firstTime: '2026-03-01T10:05:00Z' });
    const early = eventRecord({
      uid: 'ev-1',
      runUid: 'rec-2',
      reason: 'HookFailed',
      type: 'Warning',
    });
    // The same Event twice in one batch, and again later with a higher count.
    await store.putEvents([late, early, late]);
    await store.putEvents([{ ...late, count: 4 }]);
    await store.putEvents([]);
    const got = await store.getRun({ uid: 'rec-2' });
    expect(got?.attempts.map((a) => [a.slot, a.attempt])).toEqual([
      [0, 1],
      [0, 2],
      [1, 1],
    ]);
    expect(got?.attempts[0]).toEqual(attempts[2]);
    expect(got?.events).toEqual([early, { ...late, count: 4 }]);
  });

  it('finds a run by namespace and name: the newest of that name', async () => {
    const store = await open();
    await store.putRun(
      runRecord({ uid: 'name-old', name: 'reused', createdAt: '2026-03-02T10:00:00Z' }),
    );
    await store.putRun(
      runRecord({ uid: 'name-new', name: 'reused', createdAt: '2026-03-02T11:00:00Z' }),
    );
    await store.putRun(
      runRecord({
        uid: 'name-other-ns',
        name: 'reused',
        namespace: 'team-z',
        createdAt: '2026-03-02T12:00:00Z',
      }),
    );
    expect((await store.getRun({ namespace: 'team-a', name: 'reused' }))?.run.uid).toBe('name-new');
    expect(await store.getRun({ namespace: 'team-a', name: 'never' })).toBeUndefined();
    expect(await store.getRun({ uid: 'never' })).toBeUndefined();
    expect((await rejection(store.getRun({ name: 'reused' }))).code).toBe('archive_query_invalid');
  });

  it('marks a run deleted, and a later write of the run does not bring it back to life', async () => {
    const store = await open();
    await store.putRun(runRecord({ uid: 'del-1' }));
    await store.markDeleted('del-1', '2026-03-03T00:00:00Z');
    await store.putRun(runRecord({ uid: 'del-1', phase: 'Failed' }));
    const got = await store.getRun({ uid: 'del-1' });
    expect(got?.run.deletedAt).toBe('2026-03-03T00:00:00Z');
    expect(got?.run.phase).toBe('Failed');
  });
});

describe('PostgreSQL archive store: listing runs', () => {
  let store: ArchiveStore;
  // Its own namespaces, so the other tests' runs do not show.
  const ns = ['list-a', 'list-b'];
  const runs = [
    runRecord({
      uid: 'l1',
      namespace: 'list-a',
      workflow: 'board',
      issueIdentifier: 'ENG-1',
      issueId: 'i1',
      phase: 'Succeeded',
      reason: 'IssueCompleted',
      createdAt: '2026-04-01T08:00:00Z',
    }),
    runRecord({
      uid: 'l2',
      namespace: 'list-a',
      workflow: 'board',
      issueIdentifier: 'ENG-2',
      issueId: 'i2',
      phase: 'Failed',
      reason: 'HookFailed',
      createdAt: '2026-04-01T09:00:00Z',
    }),
    runRecord({
      uid: 'l3',
      namespace: 'list-b',
      workflow: 'nightly',
      issueIdentifier: 'ENG-1',
      issueId: 'i1',
      phase: 'Failed',
      reason: 'AgentFailed',
      createdAt: '2026-04-02T08:00:00Z',
    }),
    runRecord({
      uid: 'l4',
      namespace: 'list-b',
      workflow: 'board',
      issueIdentifier: 'ENG-4',
      issueId: 'i4',
      phase: 'Running',
      reason: undefined,
      createdAt: '2026-04-03T08:00:00Z',
    }),
  ];

  beforeAll(async () => {
    store = await open();
    for (const run of runs) await store.putRun(run);
    await store.markDeleted('l1', '2026-04-05T00:00:00Z');
    await store.markDeleted('l3', '2026-04-05T00:00:00Z');
  });

  it.each([
    ['every run, newest first', {}, ['l4', 'l3', 'l2', 'l1']],
    ['one namespace', { namespaces: ['list-b'] }, ['l4', 'l3']],
    ['no namespace at all', { namespaces: [] }, []],
    ['a Workflow', { workflow: 'board' }, ['l4', 'l2', 'l1']],
    ['an issue by identifier', { issue: 'ENG-1' }, ['l3', 'l1']],
    ['an issue by tracker id', { issue: 'i2' }, ['l2']],
    ['a phase', { phase: 'Failed' }, ['l3', 'l2']],
    ['a reason', { reason: 'HookFailed' }, ['l2']],
    ['since (inclusive)', { since: '2026-04-02T08:00:00Z' }, ['l4', 'l3']],
    ['until (exclusive)', { until: '2026-04-02T08:00:00Z' }, ['l2', 'l1']],
    [
      'a time range with an offset',
      { since: '2026-04-01T10:30:00+02:00', until: '2026-04-03T00:00:00Z' },
      ['l3', 'l2'],
    ],
    ['only deleted runs', { includeLive: false }, ['l3', 'l1']],
    ['filters together', { workflow: 'board', phase: 'Failed', includeLive: true }, ['l2']],
  ])('%s', async (_name, query, uids) => {
    const page = await store.listRuns({ namespaces: ns, ...query });
    expect(page.runs.map((run) => run.uid)).toEqual(uids);
    expect(page.continue).toBeUndefined();
  });

  it('returns whole records, with deletedAt', async () => {
    const page = await store.listRuns({ namespaces: ['list-a'] });
    expect(page.runs).toEqual([runs[1], { ...runs[0], deletedAt: '2026-04-05T00:00:00Z' }]);
  });

  it('pages with a continue token: every run once, newest first, ties broken by uid', async () => {
    // 25 runs, some created in the same second.
    const paged = Array.from({ length: 25 }, (_, i) =>
      runRecord({
        uid: `page-${String(i).padStart(2, '0')}`,
        namespace: 'paging',
        createdAt: `2026-05-01T10:00:${String(Math.floor(i / 3)).padStart(2, '0')}Z`,
      }),
    );
    for (const run of paged) await store.putRun(run);
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await store.listRuns({ namespaces: ['paging'], limit: 10, continue: token });
      seen.push(...page.runs.map((run) => run.uid));
      token = page.continue;
      pages += 1;
    } while (token !== undefined);
    expect(pages).toBe(3);
    const newestFirst = [...paged].sort((a, b) =>
      a.createdAt === b.createdAt
        ? b.uid.localeCompare(a.uid)
        : b.createdAt.localeCompare(a.createdAt),
    );
    expect(seen).toEqual(newestFirst.map((run) => run.uid));
  });

  it.each([
    ['a continue token it never gave', { continue: 'not-a-token' }],
    ['a limit of 0', { limit: 0 }],
    ['a since that is no time', { since: 'yesterday' }],
  ])('rejects %s as archive_query_invalid', async (_name, query) => {
    const error = await rejection(store.listRuns(query));
    expect(error.code).toBe('archive_query_invalid');
  });

  it('sums usage by namespace, Workflow and UTC day', async () => {
    const usageStore = await open();
    await usageStore.putRun(
      runRecord({
        uid: 'u1',
        namespace: 'usage',
        workflow: 'w',
        createdAt: '2026-06-01T23:30:00-02:00',
        usage: usage(10),
      }),
    );
    await usageStore.putRun(
      runRecord({
        uid: 'u2',
        namespace: 'usage',
        workflow: 'w',
        createdAt: '2026-06-02T05:00:00Z',
        usage: usage(5),
        phase: 'Failed',
      }),
    );
    await usageStore.putRun(
      runRecord({
        uid: 'u3',
        namespace: 'usage',
        workflow: 'w',
        createdAt: '2026-06-01T05:00:00Z',
        usage: usage(1),
      }),
    );
    await usageStore.putRun(
      runRecord({
        uid: 'u4',
        namespace: 'usage',
        workflow: 'other',
        createdAt: '2026-06-02T05:00:00Z',
        usage: usage(7),
      }),
    );
    expect(await usageStore.usageByDay({ namespaces: ['usage'], workflow: 'w' })).toEqual([
      { namespace: 'usage', workflow: 'w', day: '2026-06-01', runs: 1, failed: 0, ...usage(1) },
      // 23:30 at -02:00 is the next day in UTC.
      { namespace: 'usage', workflow: 'w', day: '2026-06-02', runs: 2, failed: 1, ...usage(15) },
    ]);
    expect(
      await usageStore.usageByDay({ namespaces: ['usage'], from: '2026-06-02', to: '2026-06-02' }),
    ).toEqual([
      { namespace: 'usage', workflow: 'other', day: '2026-06-02', runs: 1, failed: 0, ...usage(7) },
      { namespace: 'usage', workflow: 'w', day: '2026-06-02', runs: 2, failed: 1, ...usage(15) },
    ]);
    expect((await rejection(usageStore.usageByDay({ from: '2026-13-45' }))).code).toBe(
      'archive_query_invalid',
    );
  });
});

describe('PostgreSQL archive store: logs', () => {
  it('keeps each piece once when the same log is read again (a restart)', async () => {
    const store = await open();
    const pieces = logPieces('log-1', 'log-1-pod', 'line', 50, 1 << 20);
    for (const piece of [...pieces, ...pieces.slice(10, 30)]) await store.appendLog(piece);
    const entries = await readAll(store, 'log-1');
    expect(entries.every((e) => e.kind === 'data')).toBe(true);
    expect(text(entries)).toBe(pieces.map((p) => p.data).join(''));
  });

  it('keeps the head and the tail within the cap, and marks the gap', async () => {
    const store = await open();
    // 11-byte lines, cap 110: offsets < 55 (5 lines) are the head; the tail gets the rest.
    const pieces = logPieces('log-2', 'log-2-pod', 'line', 40, 110);
    for (const piece of pieces) await store.appendLog(piece);
    const entries = await readAll(store, 'log-2');
    const data = entries.flatMap((e) => (e.kind === 'data' ? [e.piece] : []));
    expect(data.map((p) => p.offset)).toEqual([0, 11, 22, 33, 44, 385, 396, 407, 418, 429]);
    expect(entries[5]).toEqual({
      kind: 'elided',
      podUid: 'log-2-pod',
      slot: 0,
      attempt: 1,
      offset: 55,
      bytes: 330,
    });
    const kept = await sql(
      "SELECT sum(bytes)::int AS bytes FROM archive_log_pieces WHERE pod_uid = 'log-2-pod'",
    );
    expect(kept[0]?.bytes).toBe(110);
    // A piece dropped by the cap and written again (a re-read) is dropped again.
    await store.appendLog(pieces[10] as LogAppend);
    expect(await readAll(store, 'log-2')).toEqual(entries);
  });

  it('binary-safe: a NUL byte, invalid UTF-16 and a 1 MiB line come back as written (as UTF-8)', async () => {
    const store = await open();
    const big = `${'x'.repeat(1 << 20)}\n`;
    const odd = 'nul \u0000 lone \ud800 emoji 🦀\n';
    await store.appendLog({
      runUid: 'log-3',
      podUid: 'log-3-pod',
      slot: 0,
      attempt: 1,
      offset: 0,
      data: odd,
      capBytes: 1 << 24,
    });
    await store.appendLog({
      runUid: 'log-3',
      podUid: 'log-3-pod',
      slot: 0,
      attempt: 1,
      offset: Buffer.byteLength(odd),
      data: big,
      capBytes: 1 << 24,
    });
    const entries = await readAll(store, 'log-3');
    expect(text(entries)).toBe(`${'nul \u0000 lone \ufffd emoji 🦀\n'}${big}`);
  });

  it('reads by slot and attempt, in order (slot, attempt, offset), across many pages', async () => {
    const store = await open();
    // More pieces than one page holds (1000), written out of order.
    const a = logPieces('log-4', 'log-4-a', 'a', 1500, 1 << 24, 0, 1);
    const b = logPieces('log-4', 'log-4-b', 'b', 20, 1 << 24, 0, 2);
    const c = logPieces('log-4', 'log-4-c', 'c', 20, 1 << 24, 1, 1);
    for (const piece of [...c, ...b, ...a.reverse()]) await store.appendLog(piece);
    a.reverse();
    const all = await readAll(store, 'log-4');
    expect(text(all)).toBe([...a, ...b, ...c].map((p) => p.data).join(''));
    expect(text(await readAll(store, 'log-4', { slot: 0, attempt: 2 }))).toBe(
      b.map((p) => p.data).join(''),
    );
    expect(text(await readAll(store, 'log-4', { slot: 1 }))).toBe(c.map((p) => p.data).join(''));
    expect(await readAll(store, 'log-none')).toEqual([]);
  });

  it('two replicas appending the same log at once keep each piece once, within the cap', async () => {
    const [one, two] = [await open(), await open()];
    const pieces = logPieces('log-5', 'log-5-pod', 'line', 200, 550);
    await Promise.all([
      (async () => {
        for (const piece of pieces) await one.appendLog(piece);
      })(),
      (async () => {
        for (const piece of pieces) await two.appendLog(piece);
      })(),
    ]);
    const pieceRows = await sql(
      "SELECT sum(bytes)::int AS bytes, count(*)::int AS n FROM archive_log_pieces WHERE pod_uid = 'log-5-pod'",
    );
    expect(pieceRows).toEqual([{ bytes: 550, n: 50 }]);
    const podRows = await sql(
      "SELECT kept_bytes::int AS kept FROM archive_log_pods WHERE pod_uid = 'log-5-pod'",
    );
    expect(podRows).toEqual([{ kept: 550 }]);
    const data = (await readAll(one, 'log-5')).flatMap((e) =>
      e.kind === 'data' ? [e.piece.offset] : [],
    );
    expect(data).toEqual([...pieces.slice(0, 25), ...pieces.slice(175)].map((p) => p.offset));
  });
});

describe('PostgreSQL archive store: faults', () => {
  it('PostgreSQL killed (SIGKILL) mid-write and restarted: after retries every record is there exactly once', async () => {
    const store = await open(server.url, { connectTimeoutMs: 2_000 });
    const runs = Array.from({ length: 150 }, (_, i) =>
      runRecord({ uid: `kill-${i}`, namespace: 'kill' }),
    );
    const logs = ['kill-pod-0', 'kill-pod-1', 'kill-pod-2'].map((pod) =>
      logPieces('kill-run', pod, pod, 100, 1 << 24),
    );
    const writes: (() => Promise<void>)[] = [];
    for (let i = 0; i < 150; i += 1) {
      writes.push(() => store.putRun(runs[i] as RunRecord));
      for (const log of logs)
        if (i < log.length) writes.push(() => store.appendLog(log[i] as LogAppend));
    }
    let failures = 0;
    let done = 0;
    const deadline = Date.now() + 90_000;
    // What the archiver does: a write that failed because the database is away is retried.
    const retry = async (write: () => Promise<void>): Promise<void> => {
      for (;;) {
        try {
          await write();
          done += 1;
          return;
        } catch (error) {
          if (
            !(error instanceof ArchiveError) ||
            error.code !== 'archive_unavailable' ||
            Date.now() > deadline
          )
            throw error;
          failures += 1;
          await sleep(50);
        }
      }
    };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < writes.length) await retry(writes[next++] as () => Promise<void>);
    };
    const fault = (async () => {
      while (done < 100) await sleep(5);
      await server.kill();
      await sleep(500);
      await server.restart();
    })();
    await Promise.all([worker(), worker(), worker(), worker(), fault]);

    expect(failures).toBeGreaterThan(0);
    const counted = await sql(
      "SELECT count(*)::int AS n, count(DISTINCT uid)::int AS d FROM archive_runs WHERE namespace = 'kill'",
    );
    expect(counted).toEqual([{ n: 150, d: 150 }]);
    const pods = await sql(
      `SELECT pod_uid, count(*)::int AS n, sum(bytes)::int AS bytes, min(p.kept_bytes)::int AS kept
       FROM archive_log_pieces JOIN archive_log_pods p USING (pod_uid)
       WHERE p.run_uid = 'kill-run' GROUP BY pod_uid ORDER BY pod_uid`,
    );
    expect(pods.map((row) => [row.pod_uid, row.n, row.bytes === row.kept])).toEqual([
      ['kill-pod-0', 100, true],
      ['kill-pod-1', 100, true],
      ['kill-pod-2', 100, true],
    ]);
    expect(text(await readAll(store, 'kill-run'))).toBe(
      logs
        .flat()
        .map((p) => p.data)
        .join(''),
    );
  });

  it('a write while PostgreSQL is down rejects with archive_unavailable at once, and the same store works after restart', async () => {
    const store = await open(server.url, { connectTimeoutMs: 2_000 });
    // An idle pooled connection when the server dies: its error must not crash the process.
    await store.putRun(runRecord({ uid: 'down-0', namespace: 'down' }));
    await server.kill();
    try {
      const started = Date.now();
      const error = await rejection(store.putRun(runRecord({ uid: 'down-1', namespace: 'down' })));
      expect(error.code).toBe('archive_unavailable');
      expect(error.message).toContain(server.url);
      expect(Date.now() - started).toBeLessThan(2_500);
      const logError = await rejection(
        store.appendLog(logPieces('down-1', 'down-pod', 'l', 1, 100)[0] as LogAppend),
      );
      expect(logError.code).toBe('archive_unavailable');
      const readError = await rejection(store.listRuns({ namespaces: ['down'] }));
      expect(readError.code).toBe('archive_unavailable');
    } finally {
      await server.restart();
    }
    await store.putRun(runRecord({ uid: 'down-1', namespace: 'down' }));
    expect((await store.listRuns({ namespaces: ['down'] })).runs.map((run) => run.uid)).toEqual([
      'down-1',
      'down-0',
    ]);
  });

  it('a server that accepts connections but never answers: archive_unavailable within the timeouts, no hang', async () => {
    const url = server.url;
    const fresh = await openPostgresArchive(url, {
      connectTimeoutMs: 1_000,
      statementTimeoutMs: 1_000,
    });
    opened.push(fresh);
    const busy = await open(url, { connectTimeoutMs: 1_000, statementTimeoutMs: 1_000 });
    await busy.putRun(runRecord({ uid: 'frozen-0', namespace: 'frozen' }));
    await server.freeze();
    try {
      const started = Date.now();
      // A new connection (the connect timeout), and a pooled one (the client's read timeout).
      const [connecting, pooled] = await Promise.all([
        rejection(fresh.putRun(runRecord({ uid: 'frozen-1', namespace: 'frozen' }))),
        rejection(busy.putRun(runRecord({ uid: 'frozen-2', namespace: 'frozen' }))),
      ]);
      expect([connecting.code, pooled.code]).toEqual([
        'archive_unavailable',
        'archive_unavailable',
      ]);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await server.thaw();
    }
    await busy.putRun(runRecord({ uid: 'frozen-2', namespace: 'frozen' }));
    expect((await busy.getRun({ uid: 'frozen-2' }))?.run.uid).toBe('frozen-2');
  });

  it('two stores migrating one database at once: one schema, each version recorded once', async () => {
    const url = await freshDatabase('migrate_race');
    const stores = await Promise.all([1, 2, 3].map(() => openPostgresArchive(url)));
    opened.push(...stores);
    await Promise.all(stores.map((store) => store.migrate()));
    const versions = await sql(
      'SELECT version FROM archive_schema_migrations ORDER BY version',
      [],
      'migrate_race',
    );
    expect(versions.map((row) => row.version)).toEqual(MIGRATIONS.map((m) => m.version));
    const tables = await sql(
      "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'archive_runs'",
      [],
      'migrate_race',
    );
    expect(tables).toEqual([{ n: 1 }]);
    await stores[0]?.putRun(runRecord({ uid: 'race-1' }));
    expect((await stores[2]?.getRun({ uid: 'race-1' }))?.run.uid).toBe('race-1');
  });

  it('a schema newer than this Lorenz knows: archive_schema_newer, nothing changed', async () => {
    const url = await freshDatabase('schema_newer');
    const store = await open(url);
    await sql('INSERT INTO archive_schema_migrations (version) VALUES (9999)', [], 'schema_newer');
    const error = await rejection(store.migrate());
    expect(error.code).toBe('archive_schema_newer');
    expect(error.message).toContain('9999');
  });

  it('a DSN with a wrong password: a clear error that does not print the password', async () => {
    await sql(`CREATE ROLE archiver LOGIN PASSWORD 'right-secret-1' IN ROLE ${PASSWORD_GROUP}`);
    const good = `postgres://archiver:right-secret-1@${server.host}:${server.port}/${server.database}`;
    const bad = `postgres://archiver:wrong-secret-2@${server.host}:${server.port}/${server.database}`;
    const store = await openPostgresArchive(bad);
    opened.push(store);
    expect(store.location).toBe(
      `postgres://archiver:***@${server.host}:${server.port}/${server.database}`,
    );
    const error = await rejection(store.migrate());
    expect(error.code).toBe('archive_unavailable');
    expect(error.message).toContain('password authentication failed for user "archiver"');
    expect(error.message).toContain(store.location);
    expect(`${error.message}\n${error.stack}\n${String(error.cause)}`).not.toContain(
      'wrong-secret-2',
    );
    // The right one reads what is there (the role can read; this database is migrated).
    await sql('GRANT SELECT ON ALL TABLES IN SCHEMA public TO archiver');
    const right = await openPostgresArchive(good);
    opened.push(right);
    expect((await right.listRuns({ namespaces: ['list-a'] })).runs.length).toBe(2);
  });

  it("the database's disk full: archive_disk_full, and the rest of the archive goes on", async () => {
    // The log table on a 1 MiB tmpfs tablespace: a real ENOSPC inside PostgreSQL.
    const mount = join(server.dataDir, '..', 'tiny');
    mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', mount]);
    try {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      if (process.getuid?.() === 0) chownSync(mount, uid, gid);
      const url = await freshDatabase('disk_full');
      const store = await open(url);
      await sql(`CREATE TABLESPACE tiny LOCATION '${mount}'`, [], 'disk_full');
      await sql('ALTER TABLE archive_log_pieces SET TABLESPACE tiny', [], 'disk_full');
      await sql('ALTER INDEX archive_log_pieces_pkey SET TABLESPACE tiny', [], 'disk_full');
      // Random (incompressible) text: PostgreSQL's TOAST compression does not shrink it.
      const line = `${Buffer.from(Array.from({ length: 96 * 1024 }, () => Math.floor(Math.random() * 256))).toString('base64')}\n`;
      let error: ArchiveError | undefined;
      for (let i = 0; i < 40 && error === undefined; i += 1) {
        try {
          await store.appendLog({
            runUid: 'full',
            podUid: 'full-pod',
            slot: 0,
            attempt: 1,
            offset: i * line.length,
            data: line,
            capBytes: 1 << 30,
          });
        } catch (caught) {
          expect(caught).toBeInstanceOf(ArchiveError);
          error = caught as ArchiveError;
        }
      }
      expect(error?.code).toBe('archive_disk_full');
      expect(error?.message).toContain('disk is full');
      await store.putRun(runRecord({ uid: 'full-run' }));
      expect((await store.getRun({ uid: 'full-run' }))?.run.uid).toBe('full-run');
      await sql('DROP TABLE archive_log_pieces', [], 'disk_full');
      await sql('DROP TABLESPACE tiny', [], 'disk_full');
    } finally {
      execFileSync('umount', [mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  });
});
