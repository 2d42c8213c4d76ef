// The archive's PostgreSQL store against a real PostgreSQL server (test/support/postgres.ts:
// initdb on loopback, one server for this file): what every store does, and the faults of a
// database on the network: killed mid-write, down, frozen, full, raced by a second replica,
// given a wrong password.
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/archive/migrations/migrations.js';
import { openPostgresArchive } from '../../src/archive/postgres.js';
import {
  ArchiveError,
  type ArchiveStore,
  type LogAppend,
  type LogEntry,
  type RunRecord,
} from '../../src/archive/types.js';
import { PASSWORD_GROUP, startPostgres, type TestPostgres } from '../support/postgres.js';
import { describeArchiveContract, run } from '../support/archive-store-contract.js';

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

// What every store does, each test on a fresh database of this server.
let databases = 0;
describeArchiveContract(
  'postgres',
  async () => openPostgresArchive(await freshDatabase(`contract_${++databases}`)),
  {
    async recordSchemaVersion(store, version) {
      // The location is the URL (no password here): the store's own database.
      const client = new pg.Client({ connectionString: store.location });
      await client.connect();
      try {
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
          version,
          new Date().toISOString(),
        ]);
      } finally {
        await client.end();
      }
    },
  },
);

const usage = (n: number) => ({ inputTokens: n, outputTokens: 2 * n, totalTokens: 3 * n });

/** The contract's run record, as the board's runs of March 2026 with one unit of usage. */
const runRecord = (over: Partial<RunRecord> & { uid: string }): RunRecord =>
  run({
    workflow: 'board',
    issueTitle: 'Fix the thing',
    createdAt: '2026-03-01T10:00:00Z',
    usage: usage(1),
    object: { spec: { issue: { id: `id-${over.uid}` } }, status: { phase: 'Succeeded' } },
    ...over,
  });

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

describe('PostgreSQL archive store: logs', () => {
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

  it('reads a log bigger than a page of bytes (4 MiB) whole, in order', async () => {
    const store = await open();
    const mib = (i: number) => `${String(i).padStart(8, '0')}${'y'.repeat((1 << 20) - 9)}\n`;
    for (let i = 0; i < 10; i += 1) {
      await store.appendLog({
        runUid: 'log-6',
        podUid: 'log-6-pod',
        slot: 0,
        attempt: 1,
        offset: i << 20,
        data: mib(i),
        capBytes: 1 << 25,
      });
    }
    const entries = await readAll(store, 'log-6');
    expect(entries.map((e) => (e.kind === 'data' ? e.piece.offset : -1))).toEqual(
      Array.from({ length: 10 }, (_, i) => i << 20),
    );
    expect(text(entries)).toBe(Array.from({ length: 10 }, (_, i) => mib(i)).join(''));
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
      "SELECT sum(bytes)::int AS bytes, count(*)::int AS n FROM log_pieces WHERE pod_uid = 'log-5-pod'",
    );
    expect(pieceRows).toEqual([{ bytes: 550, n: 50 }]);
    const podRows = await sql(
      "SELECT kept_bytes::int AS kept FROM log_pods WHERE pod_uid = 'log-5-pod'",
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
      "SELECT count(*)::int AS n, count(DISTINCT uid)::int AS d FROM runs WHERE namespace = 'kill'",
    );
    expect(counted).toEqual([{ n: 150, d: 150 }]);
    const pods = await sql(
      `SELECT pod_uid, count(*)::int AS n, sum(bytes)::int AS bytes, min(p.kept_bytes)::int AS kept
       FROM log_pieces JOIN log_pods p USING (pod_uid)
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
      // No migration: no connection yet when the server freezes.
      migrate: false,
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
      'SELECT version FROM schema_migrations ORDER BY version',
      [],
      'migrate_race',
    );
    expect(versions.map((row) => row.version)).toEqual(MIGRATIONS.map((m) => m.version));
    const tables = await sql(
      "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'runs'",
      [],
      'migrate_race',
    );
    expect(tables).toEqual([{ n: 1 }]);
    await stores[0]?.putRun(runRecord({ uid: 'race-1' }));
    expect((await stores[2]?.getRun({ uid: 'race-1' }))?.run.uid).toBe('race-1');
  });

  it('a DSN with a wrong password: a clear error that does not print the password', async () => {
    await sql(`CREATE ROLE archiver LOGIN PASSWORD 'right-secret-1' IN ROLE ${PASSWORD_GROUP}`);
    // The role the docs ask for: the owner of its database (PostgreSQL 15: CREATE on public).
    await sql('CREATE DATABASE owned OWNER archiver', [], 'postgres');
    const where = `${server.host}:${server.port}/owned`;
    const bad = `postgres://archiver:wrong-secret-2@${where}`;
    const error = await rejection(openPostgresArchive(bad));
    expect(error.code).toBe('archive_unavailable');
    expect(error.message).toContain('password authentication failed for user "archiver"');
    expect(error.message).toContain(`postgres://archiver:***@${where}`);
    expect(`${error.message}\n${error.stack}\n${String(error.cause)}`).not.toContain(
      'wrong-secret-2',
    );
    const unmigrated = await openPostgresArchive(bad, { migrate: false });
    opened.push(unmigrated);
    expect(unmigrated.location).toBe(`postgres://archiver:***@${where}`);
    // The right password: the role migrates its database and writes to it.
    const right = await open(`postgres://archiver:right-secret-1@${where}`);
    await right.putRun(runRecord({ uid: 'owned-1' }));
    expect((await right.getRun({ uid: 'owned-1' }))?.run.uid).toBe('owned-1');
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
      await sql('ALTER TABLE log_pieces SET TABLESPACE tiny', [], 'disk_full');
      await sql('ALTER INDEX log_pieces_pkey SET TABLESPACE tiny', [], 'disk_full');
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
      await sql('DROP TABLE log_pieces', [], 'disk_full');
      await sql('DROP TABLESPACE tiny', [], 'disk_full');
    } finally {
      execFileSync('umount', [mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  });
});
