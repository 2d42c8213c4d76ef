/**
 * The embedded archive: one SQLite file through Node 24's built-in `node:sqlite` (no native
 * addon to build or ship). WAL lets readers (the read API, `lorenz logs`) run beside the one
 * writer; a second writer process would wait on the lock (busy_timeout), so the chart runs one
 * replica with this store. Every call is synchronous inside: a transaction never spans an
 * await, so calls of one process cannot interleave inside each other's transactions.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { createGroupCommit, type GroupCommit } from './group-commit.js';
import { UPSERT_ATTEMPT, UPSERT_EVENT, UPSERT_RUN } from './sqlite-upserts.js';
import { acceptsPiece, planDrops, withElisions, type StoredPiece } from './log-cap.js';
import { runListSql, runPageOf } from './run-page.js';
import { MIGRATIONS, SCHEMA_MIGRATIONS_DDL, pendingMigrations } from './migrations/migrations.js';
import { normalizeRunQuery, normalizeUsageQuery } from './query.js';
import * as records from './records.js';
import type * as archive from './types.js';
import { ArchiveError } from './types.js';

export interface SqliteArchiveOptions {
  /**
   * The most pages the file may grow to (PRAGMA max_page_count): past it every write fails
   * with SQLITE_FULL, as on a full disk. Tests use it to fill the database for real.
   */
  maxPageCount?: number;
  /** How long a write waits for another connection's lock before it fails (ms). */
  busyTimeoutMs?: number;
  /**
   * PRAGMA synchronous. FULL (the default) syncs the WAL at every commit: a run whose
   * finalizer is released after its write survives a power cut. OFF is for seeding benchmarks.
   */
  synchronous?: 'FULL' | 'NORMAL' | 'OFF';
}

/**
 * Pieces fetched per query by readLog: a 32 MiB log never sits in one result (at the 256 KiB
 * pieces the log follower writes, a page is 4 MiB), and no read transaction stays open while
 * a slow reader (`lorenz logs` over the network) consumes it.
 */
const LOG_PAGE = 16;
/** Candidates fetched per query when the cap drops pieces. */
const DROP_PAGE = 64;

const SQLITE_FULL = 13;

/** A node:sqlite failure as an ArchiveError (disk full, or the store being unusable). */
function toArchiveError(error: unknown, location: string): ArchiveError {
  if (error instanceof ArchiveError) return error;
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof errcode === 'number' && (errcode & 0xff) === SQLITE_FULL) {
    return new ArchiveError('archive_disk_full', `archive ${location} is full: ${message}`, {
      cause: error,
    });
  }
  return new ArchiveError('archive_unavailable', `archive ${location}: ${message}`, {
    cause: error,
  });
}

interface PieceRow {
  pod_uid: string;
  slot: number;
  attempt: number;
  byte_offset: number;
  bytes: number;
  data: string;
}

class SqliteArchive implements archive.ArchiveStore {
  readonly kind = 'sqlite' as const;
  private readonly statements = new Map<string, StatementSync>();
  /** The writes: grouped into one transaction (one sync) per turn of the event loop. */
  private readonly writes: GroupCommit;

  constructor(
    private readonly db: DatabaseSync,
    readonly location: string,
  ) {
    this.writes = createGroupCommit(db, (error) => toArchiveError(error, location));
  }

  /** A cached prepared statement (listRuns builds a few shapes of SQL, each reused). */
  private stmt(sql: string): StatementSync {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private guard<T>(work: () => T): Promise<T> {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(toArchiveError(error, this.location));
    }
  }

  /**
   * A write of the group commit; its checks (a bad record) throw before anything is queued.
   */
  private write(prepare: () => () => void): Promise<void> {
    let work: () => void;
    try {
      work = prepare();
    } catch (error) {
      return Promise.reject(toArchiveError(error, this.location));
    }
    return this.writes.run(work);
  }

  /** Runs `work` in one write transaction (taken at once, so it never upgrades and deadlocks). */
  private tx<T>(work: () => T): T {
    // Inside a group's transaction already: it commits (or undoes) this with the rest.
    if (this.db.isTransaction) return work();
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = work();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      // SQLite may have rolled back already (SQLITE_FULL does, for some statements).
      if (this.db.isTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  migrate(): Promise<void> {
    return this.guard(() => {
      this.db.exec(SCHEMA_MIGRATIONS_DDL.sqlite);
      this.tx(() => {
        const rows = this.db.prepare('SELECT version FROM schema_migrations').all() as {
          version: number;
        }[];
        for (const migration of pendingMigrations(
          rows.map((r) => r.version),
          MIGRATIONS,
        )) {
          this.db.exec(migration.sqlite);
          this.db
            .prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)')
            .run(migration.version, new Date().toISOString());
        }
      });
      // Statements prepared against an older schema are stale.
      this.statements.clear();
    });
  }

  putRun(run: archive.RunRecord): Promise<void> {
    return this.write(() => {
      const c = records.runColumns(run);
      return () => {
        // A run marked deleted stays deleted when a late write of it (a restart's replay)
        // carries no deletion time.
        this.stmt(UPSERT_RUN).run(...records.runRow(c));
      };
    });
  }

  putAttempt(attempt: archive.AttemptRecord): Promise<void> {
    return this.write(() => {
      const c = records.attemptColumns(attempt);
      return () => {
        this.stmt(UPSERT_ATTEMPT).run(c.runUid, c.slot, c.attempt, c.podUid, c.phase, c.record);
      };
    });
  }

  putEvents(events: readonly archive.EventRecord[]): Promise<void> {
    return this.write(() => {
      const rows = events.map(records.eventColumns);
      return () => {
        if (rows.length === 0) return;
        const insert = this.stmt(UPSERT_EVENT);
        for (const c of rows) insert.run(c.uid, c.runUid, c.firstTime, c.record);
      };
    });
  }

  appendLog(piece: archive.LogAppend): Promise<void> {
    return this.write(() => {
      const bytes = records.logAppendBytes(piece);
      const cap = piece.capBytes;
      return () => {
        const exists = this.stmt(
          'SELECT 1 AS one FROM log_pieces WHERE pod_uid = ? AND byte_offset = ?',
        ).get(piece.podUid, piece.offset);
        if (exists !== undefined) return;
        const row = this.stmt('SELECT kept_bytes, dropped_end FROM log_pods WHERE pod_uid = ?').get(
          piece.podUid,
        ) as { kept_bytes: number; dropped_end: number } | undefined;
        let state = { keptBytes: row?.kept_bytes ?? 0, droppedEnd: row?.dropped_end ?? 0 };
        if (!acceptsPiece(piece.offset, cap, state)) return;
        this.stmt(
          `INSERT INTO log_pieces (pod_uid, byte_offset, run_uid, slot, attempt, bytes, data)
           VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (pod_uid, byte_offset) DO NOTHING`,
        ).run(
          piece.podUid,
          piece.offset,
          piece.runUid,
          piece.slot,
          piece.attempt,
          bytes,
          piece.data,
        );
        state = { ...state, keptBytes: state.keptBytes + bytes };
        const candidates = this.stmt(
          `SELECT byte_offset AS offset, bytes FROM log_pieces
           WHERE pod_uid = ? AND byte_offset >= ? ORDER BY byte_offset LIMIT ${DROP_PAGE}`,
        );
        const remove = this.stmt('DELETE FROM log_pieces WHERE pod_uid = ? AND byte_offset = ?');
        while (state.keptBytes > cap) {
          const page = candidates.all(piece.podUid, cap / 2) as { offset: number; bytes: number }[];
          const plan = planDrops(state, cap, page);
          for (const offset of plan.drop) remove.run(piece.podUid, offset);
          state = plan.state;
          if (plan.done || page.length < DROP_PAGE) break;
        }
        this.stmt(
          `INSERT INTO log_pods (pod_uid, run_uid, kept_bytes, dropped_end) VALUES (?, ?, ?, ?)
           ON CONFLICT (pod_uid) DO UPDATE SET kept_bytes = excluded.kept_bytes,
             dropped_end = excluded.dropped_end`,
        ).run(piece.podUid, piece.runUid, state.keptBytes, state.droppedEnd);
      };
    });
  }

  listRuns(query: archive.RunQuery): Promise<archive.RunPage> {
    return this.guard(() => {
      const q = normalizeRunQuery(query);
      if (q.namespaces !== undefined && q.namespaces.length === 0) return { runs: [] };
      const params: SQLInputValue[] = [];
      const sql = runListSql(q, {
        param: (value) => {
          params.push(value as SQLInputValue);
          return '?';
        },
        namespaceIn: (namespaces, param) => `namespace IN (${namespaces.map(param).join(', ')})`,
        text: (value) => value,
      });
      type Row = { uid: string; created_at: string; deleted_at: string | null; record: string };
      const rows = this.stmt(sql).all(...params) as Row[];
      return runPageOf(
        rows,
        q.limit,
        (row) => records.runFromRow(row.record, row.deleted_at),
        (row) => ({ createdAt: row.created_at, uid: row.uid }),
      );
    });
  }

  getRun(ref: archive.RunRef): Promise<archive.ArchivedRun | undefined> {
    return this.guard(() => {
      type Row = { uid: string; deleted_at: string | null; record: string };
      let row: Row | undefined;
      if (ref.uid !== undefined) {
        row = this.stmt('SELECT uid, deleted_at, record FROM runs WHERE uid = ?').get(ref.uid) as
          Row | undefined;
      } else if (ref.namespace !== undefined && ref.name !== undefined) {
        row = this.stmt(
          `SELECT uid, deleted_at, record FROM runs WHERE namespace = ? AND name = ?
           ORDER BY created_at DESC, uid DESC LIMIT 1`,
        ).get(ref.namespace, ref.name) as Row | undefined;
      } else {
        throw new ArchiveError(
          'archive_query_invalid',
          'a run is named by its uid, or by namespace and name',
        );
      }
      if (row === undefined) return undefined;
      const attempts = (
        this.stmt('SELECT record FROM attempts WHERE run_uid = ? ORDER BY slot, attempt').all(
          row.uid,
        ) as { record: string }[]
      ).map((r) => JSON.parse(r.record) as archive.AttemptRecord);
      const events = (
        this.stmt('SELECT record FROM events WHERE run_uid = ? ORDER BY first_time, uid').all(
          row.uid,
        ) as { record: string }[]
      ).map((r) => JSON.parse(r.record) as archive.EventRecord);
      return { run: records.runFromRow(row.record, row.deleted_at), attempts, events };
    });
  }

  readLog(runUid: string, filter: archive.LogFilter = {}): AsyncIterable<archive.LogEntry> {
    return withElisions(this.pieces(runUid, filter), (podUid) =>
      this.guard(
        () =>
          (
            this.stmt('SELECT dropped_end FROM log_pods WHERE pod_uid = ?').get(podUid) as
              { dropped_end: number } | undefined
          )?.dropped_end ?? 0,
      ),
    );
  }

  /** The run's pieces in order, LOG_PAGE at a time (keyset paging on the index's order). */
  private async *pieces(runUid: string, filter: archive.LogFilter): AsyncGenerator<StoredPiece> {
    const where = ['run_uid = ?'];
    const fixed: SQLInputValue[] = [runUid];
    condition(where, fixed, 'slot = ?', filter.slot);
    condition(where, fixed, 'attempt = ?', filter.attempt);
    const select = `SELECT pod_uid, slot, attempt, byte_offset, bytes, data FROM log_pieces WHERE ${where.join(' AND ')}`;
    const order = ` ORDER BY slot, attempt, pod_uid, byte_offset LIMIT ${LOG_PAGE}`;
    let after: PieceRow | undefined;
    for (;;) {
      const page = await this.guard(() =>
        after === undefined
          ? (this.stmt(select + order).all(...fixed) as unknown as PieceRow[])
          : (this.stmt(
              `${select} AND (slot, attempt, pod_uid, byte_offset) > (?, ?, ?, ?)${order}`,
            ).all(
              ...fixed,
              after.slot,
              after.attempt,
              after.pod_uid,
              after.byte_offset,
            ) as unknown as PieceRow[]),
      );
      for (const r of page) {
        yield {
          podUid: r.pod_uid,
          slot: r.slot,
          attempt: r.attempt,
          offset: r.byte_offset,
          bytes: r.bytes,
          data: r.data,
        };
      }
      if (page.length < LOG_PAGE) return;
      after = page.at(-1);
    }
  }

  usageByDay(query: archive.UsageQuery): Promise<archive.UsageRow[]> {
    return this.guard(() => {
      const w = normalizeUsageQuery(query);
      if (w.namespaces !== undefined && w.namespaces.length === 0) return [];
      const where: string[] = [];
      const params: SQLInputValue[] = [];
      if (w.namespaces !== undefined) {
        where.push(`namespace IN (${w.namespaces.map(() => '?').join(', ')})`);
        params.push(...w.namespaces);
      }
      condition(where, params, 'workflow = ?', w.workflow);
      condition(where, params, 'created_at >= ?', w.fromTime);
      condition(where, params, 'created_at < ?', w.toTime);
      const sql =
        `SELECT namespace, workflow, substr(created_at, 1, 10) AS day, COUNT(*) AS runs,
           SUM(CASE WHEN phase = 'Failed' THEN 1 ELSE 0 END) AS failed,
           SUM(input_tokens) AS inputTokens, SUM(output_tokens) AS outputTokens,
           SUM(total_tokens) AS totalTokens
         FROM runs` +
        (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
        ` GROUP BY namespace, workflow, day ORDER BY day, namespace, workflow`;
      return (this.stmt(sql).all(...params) as unknown as archive.UsageRow[]).map((r) => ({
        ...r,
      }));
    });
  }

  close(): Promise<void> {
    return this.guard(() => {
      if (this.db.isOpen) this.writes.flush();
      if (this.db.isOpen) this.db.close();
    });
  }
}

/**
 * Opens (creating the file and its directory when missing) and migrates a SQLite archive.
 * `path` may be `:memory:` for a throwaway database.
 */
export async function openSqliteArchive(
  path: string,
  options: SqliteArchiveOptions = {},
): Promise<archive.ArchiveStore> {
  const memory = path === ':memory:';
  const file = memory ? path : resolve(path);
  const location = `sqlite:${file}`;
  let db: DatabaseSync;
  try {
    if (!memory) mkdirSync(dirname(file), { recursive: true });
    db = new DatabaseSync(file);
    db.exec(`PRAGMA busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec(`PRAGMA synchronous = ${options.synchronous ?? 'FULL'}`);
    // No table declares a foreign key today (the log follower's pieces may land before the
    // reconciler's run row); on, so that a migration that adds one is enforced.
    db.exec('PRAGMA foreign_keys = ON');
    if (options.maxPageCount !== undefined) {
      db.exec(`PRAGMA max_page_count = ${Math.trunc(options.maxPageCount)}`);
    }
  } catch (error) {
    throw toArchiveError(error, location);
  }
  const store = new SqliteArchive(db, location);
  try {
    await store.migrate();
  } catch (error) {
    db.close();
    throw error;
  }
  return store;
}

/** Adds a condition (one `?`) and its value to a WHERE clause being built; unset, it is left out. */
function condition(
  where: string[],
  params: SQLInputValue[],
  sql: string,
  value: SQLInputValue | undefined,
): void {
  if (value === undefined) return;
  where.push(sql);
  params.push(value);
}
