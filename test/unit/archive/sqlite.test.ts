// The SQLite archive store on real files in a temp directory: the shared contract
// (archive-store-contract.ts), then what is SQLite's own, and the archive DSN.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import {
  defaultArchivePath,
  maskDsn,
  openArchive,
  parseArchiveDsn,
} from '../../../src/archive/dsn.js';
import { openSqliteArchive } from '../../../src/archive/sqlite.js';
import { ArchiveError, type ArchiveStore } from '../../../src/archive/types.js';
import { describeArchiveContract, run } from '../../support/archive-store-contract.js';
import { eachCase } from '../../support/cases.js';

const root = mkdtempSync(join(tmpdir(), 'lorenz-archive-sqlite-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const freshPath = (): string => join(root, `db-${++counter}`, 'archive.db');

/** The file behind a store's location (`sqlite:/path`). */
const fileOf = (store: ArchiveStore): string => store.location.replace(/^sqlite:/, '');

describeArchiveContract('sqlite', () => openSqliteArchive(freshPath()), {
  recordSchemaVersion(store, version) {
    const db = new DatabaseSync(fileOf(store));
    try {
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
        version,
        new Date().toISOString(),
      );
    } finally {
      db.close();
    }
    return Promise.resolve();
  },
});

/** The ArchiveError code a promise rejects with; undefined when it resolves. */
async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (e: unknown) => (e instanceof ArchiveError ? e.code : `not an ArchiveError: ${String(e)}`),
  );
}

describe('sqlite archive store', () => {
  it('creates the file and its parent directories, in WAL mode, and says where it is', async () => {
    const path = join(root, 'deep', 'er', 'archive.db');
    const store = await openSqliteArchive(path);
    try {
      expect(existsSync(path)).toBe(true);
      expect(store.kind).toBe('sqlite');
      expect(store.location).toBe(`sqlite:${path}`);
      const db = new DatabaseSync(path);
      expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
      db.close();
    } finally {
      await store.close();
    }
  });

  it('keeps its data across close and reopen', async () => {
    const path = freshPath();
    const first = await openSqliteArchive(path);
    await first.putRun(run({ uid: 'kept' }));
    await first.appendLog({
      runUid: 'kept',
      podUid: 'p',
      slot: 0,
      attempt: 1,
      offset: 0,
      data: 'hi\n',
      capBytes: 100,
    });
    await first.close();
    await first.close(); // twice is harmless
    const second = await openSqliteArchive(path);
    try {
      expect((await second.listRuns({})).runs.map((r) => r.uid)).toEqual(['kept']);
      const entries = [];
      for await (const e of second.readLog('kept')) entries.push(e);
      expect(entries).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('refuses at open a file whose schema is newer than the code', async () => {
    const path = freshPath();
    const store = await openSqliteArchive(path);
    await store.close();
    const db = new DatabaseSync(path);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(2000, 'x');
    db.close();
    expect(await codeOf(openSqliteArchive(path))).toBe('archive_schema_newer');
  });

  it('reports a full database as archive_disk_full, rolls the write back, and still reads', async () => {
    // max_page_count makes SQLite itself answer SQLITE_FULL, as it does on a full disk.
    const path = freshPath();
    const store = await openSqliteArchive(path, { maxPageCount: 40 });
    try {
      await store.putRun(run({ uid: 'before' }));
      const big = 'x'.repeat(8 * 1024);
      let code: string | undefined;
      let written = 0;
      for (let i = 0; i < 100 && code === undefined; i++) {
        code = await codeOf(
          store.appendLog({
            runUid: 'before',
            podUid: 'p',
            slot: 0,
            attempt: 1,
            offset: i * big.length,
            data: big,
            capBytes: 1 << 30,
          }),
        );
        if (code === undefined) written++;
      }
      expect(code).toBe('archive_disk_full');
      expect(written).toBeGreaterThan(0);
      // The failed append left nothing half-written: every piece read back is whole.
      const pieces = [];
      for await (const e of store.readLog('before')) pieces.push(e);
      expect(pieces.map((e) => (e.kind === 'data' ? e.piece.data.length : -1))).toEqual(
        Array(written).fill(big.length),
      );
      expect((await store.getRun({ uid: 'before' }))?.run.uid).toBe('before');
    } finally {
      await store.close();
    }
  });

  it('reports a write that waited out the lock of another writer as archive_unavailable', async () => {
    const path = freshPath();
    const store = await openSqliteArchive(path, { busyTimeoutMs: 50 });
    const other = new DatabaseSync(path);
    try {
      other.exec('BEGIN IMMEDIATE');
      const error = await store.putRun(run({ uid: 'blocked' })).then(
        () => undefined,
        (e: unknown) => e as ArchiveError,
      );
      expect(error?.code).toBe('archive_unavailable');
      expect(error?.message).toMatch(/locked|busy/i);
      other.exec('ROLLBACK');
      // Once the lock is gone, the same write goes through.
      await store.putRun(run({ uid: 'blocked' }));
      expect((await store.listRuns({})).runs.map((r) => r.uid)).toEqual(['blocked']);
    } finally {
      other.close();
      await store.close();
    }
  });

  it('reports a file it cannot open as archive_unavailable, naming it', async () => {
    const notADirectory = join(root, 'plain-file');
    const seed = await openSqliteArchive(notADirectory);
    await seed.close();
    const error = await openSqliteArchive(join(notADirectory, 'archive.db')).then(
      () => undefined,
      (e: unknown) => e as ArchiveError,
    );
    expect(error?.code).toBe('archive_unavailable');
    expect(error?.message).toContain(join(notADirectory, 'archive.db'));
  });

  it('works on :memory: for throwaway databases', async () => {
    const store = await openArchive('sqlite::memory:');
    try {
      await store.putRun(run({ uid: 'm' }));
      expect((await store.listRuns({})).runs).toHaveLength(1);
      expect(store.location).toBe('sqlite::memory:');
    } finally {
      await store.close();
    }
  });
});

describe('archive DSN', () => {
  eachCase('parses %s', parseArchiveDsn, [
    ['sqlite:archive.db', { kind: 'sqlite', path: 'archive.db' }],
    ['sqlite:./data/archive.db', { kind: 'sqlite', path: './data/archive.db' }],
    ['sqlite:/var/lib/lorenz/archive.db', { kind: 'sqlite', path: '/var/lib/lorenz/archive.db' }],
    ['sqlite::memory:', { kind: 'sqlite', path: ':memory:' }],
    ['  sqlite:a.db ', { kind: 'sqlite', path: 'a.db' }],
    [
      'postgres://lorenz:s3cret@db:5432/lorenz',
      { kind: 'postgres', url: 'postgres://lorenz:s3cret@db:5432/lorenz' },
    ],
    [
      'postgresql://db/lorenz?sslmode=require',
      { kind: 'postgres', url: 'postgresql://db/lorenz?sslmode=require' },
    ],
    [
      'postgres:///lorenz?host=/var/run/postgresql',
      { kind: 'postgres', url: 'postgres:///lorenz?host=/var/run/postgresql' },
    ],
  ]);

  it.each<[string, string]>([
    ['', 'archive DSN is empty'],
    ['archive.db', 'archive DSN "archive.db" is of no known kind'],
    ['sqlite:', 'archive DSN "sqlite:" names no file'],
    ['sqlite://archive.db', 'is not a file path'],
    ['mysql://root:hunter2@db/x', 'archive DSN "mysql://root:***@db/x" is of no known kind'],
    ['postgres://u:hunter2@[bad/x', 'archive DSN "postgres://u:***@[bad/x" is not a valid URL'],
    [
      'postgres:///lorenz?password=hunter2',
      'archive DSN "postgres:///lorenz?password=***" names no host',
    ],
  ])('refuses %j', (dsn, message) => {
    let error: unknown;
    try {
      parseArchiveDsn(dsn);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ArchiveError);
    expect((error as ArchiveError).code).toBe('archive_dsn_invalid');
    expect((error as ArchiveError).message).toContain(message);
    expect((error as ArchiveError).message).toContain('sqlite:PATH');
    expect((error as ArchiveError).message).not.toContain('hunter2');
  });

  eachCase('masks %s', maskDsn, [
    ['postgres://lorenz:s3cret@db:5432/x', 'postgres://lorenz:***@db:5432/x'],
    ['postgresql://lorenz@db/x', 'postgresql://lorenz@db/x'],
    [
      'postgres://db/x?user=a&password=s3cret&sslmode=require',
      'postgres://db/x?user=a&password=***&sslmode=require',
    ],
    ['sqlite:/tmp/a.db', 'sqlite:/tmp/a.db'],
  ]);

  it.each([
    [{ XDG_CACHE_HOME: '/xdg' }, '/xdg/lorenz/archive.db'],
    [{}, '/home/u/.cache/lorenz/archive.db'],
    [{ XDG_CACHE_HOME: 'relative' }, '/home/u/.cache/lorenz/archive.db'],
  ])('puts the default archive under the cache directory (%j)', (env, want) => {
    expect(defaultArchivePath(env, '/home/u')).toBe(want);
  });

  it('opens the store a DSN names, and refuses a bad one before opening anything', async () => {
    const store = await openArchive(`sqlite:${freshPath()}`);
    expect(store.kind).toBe('sqlite');
    await store.close();
    expect(await codeOf(openArchive('sqlite://x'))).toBe('archive_dsn_invalid');
  });
});
