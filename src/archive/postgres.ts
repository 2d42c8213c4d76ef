/**
 * The archive on PostgreSQL, for clusters that run more than one controller replica: every
 * replica may open it, migrations run once under an advisory lock, every write is an upsert
 * by its natural key, and a log append and its cap are one transaction, so two replicas (or a
 * restarted one) writing the same pieces leave them once and the cap holds.
 */
import { Pool, type PoolClient, type PoolConfig } from 'pg';
import { maskDsn } from './dsn.js';
import { acceptsPiece, planDrops, withElisions, type StoredPiece } from './log-cap.js';
import { runListSql, runPageOf } from './run-page.js';
import { SCHEMA_MIGRATIONS_DDL, pendingMigrations } from './migrations/migrations.js';
import { archiveErrorOf } from './postgres-errors.js';
import { normalizeRunQuery, normalizeUsageQuery } from './query.js';
import * as records from './records.js';
import type * as archive from './types.js';
import { ArchiveError } from './types.js';

export interface PostgresArchiveOptions {
  /** Most connections of this replica (default 4). */
  maxConnections?: number;
  /** How long to wait for a connection, in ms (default 5000). */
  connectTimeoutMs?: number;
  /** How long one statement may run, server and client side, in ms (default 30 000). */
  statementTimeoutMs?: number;
  /** Run the migrations on open (default true), as `openArchive` promises. */
  migrate?: boolean;
}

/** One key for the schema's advisory lock, shared by every replica ("lorenz" in ASCII). */
const MIGRATION_LOCK = '119165345181050';
/** A page of a log read: at most this many pieces or about this many bytes. */
const LOG_PAGE_PIECES = 1000;
const LOG_PAGE_BYTES = 4 * 1024 * 1024;
/** Candidates fetched per query when the cap drops pieces. */
const DROP_PAGE = 64;

/**
 * Opens a PostgreSQL archive and (unless told not to) migrates its schema. The pool connects
 * lazily: a server that is down fails the first statement (here, the migration) with
 * archive_unavailable, and the same store works once it is back.
 */
export async function openPostgresArchive(
  url: string,
  options: PostgresArchiveOptions = {},
): Promise<archive.ArchiveStore> {
  const location = maskDsn(url);
  const statementTimeout = options.statementTimeoutMs ?? 30_000;
  const config: PoolConfig = {
    connectionString: url,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: statementTimeout,
    // The client's own bound for a server that stops answering without closing the socket.
    query_timeout: statementTimeout + 5_000,
    application_name: 'lorenz-archive',
    keepAlive: true,
  };
  const pool = new Pool(config);
  // A server that dies closes idle connections with an error, and a checked-out client can
  // get one between two statements: neither may crash the controller. The next query fails
  // instead, and the pool opens a new connection when the server is back.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const store = new PostgresArchive(pool, location);
  if (options.migrate !== false) {
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      throw error;
    }
  }
  return store;
}

type Row = Record<string, unknown>;

interface PieceRow {
  pod_uid: string;
  slot: number;
  attempt: number;
  byte_offset: string;
  bytes: string;
  data: Buffer;
}

class PostgresArchive implements archive.ArchiveStore {
  readonly kind = 'postgres' as const;

  constructor(
    private readonly pool: Pool,
    readonly location: string,
  ) {}

  private async query(doing: string, text: string, values: unknown[] = []): Promise<Row[]> {
    try {
      const result = await this.pool.query(text, values);
      return result.rows as Row[];
    } catch (error) {
      throw archiveErrorOf(error, this.location, doing);
    }
  }

  /** Runs `work` in one transaction on one connection; a failed one is rolled back. */
  private async transaction<T>(
    doing: string,
    work: (client: PoolClient) => Promise<T>,
  ): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw archiveErrorOf(error, this.location, doing);
    }
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      // A connection that failed mid-transaction is not handed out again.
      client.release(error instanceof Error ? error : true);
      throw archiveErrorOf(error, this.location, doing);
    }
  }

  async migrate(): Promise<void> {
    await this.transaction('migrating the schema', async (client) => {
      // Transaction-scoped: replicas starting at once wait here, and the lock goes with the
      // transaction even when the connection dies.
      await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK]);
      await client.query(SCHEMA_MIGRATIONS_DDL.postgres);
      const { rows } = await client.query('SELECT version FROM schema_migrations');
      let pending;
      try {
        pending = pendingMigrations(rows.map((row: Row) => Number(row.version)));
      } catch (error) {
        if (error instanceof ArchiveError) {
          throw new ArchiveError(error.code, `archive ${this.location}: ${error.message}`);
        }
        throw error;
      }
      for (const migration of pending) {
        await client.query(migration.postgres);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
          migration.version,
          new Date().toISOString(),
        ]);
      }
    });
  }

  async putRun(run: archive.RunRecord): Promise<void> {
    const c = records.runColumns(run);
    await this.query(
      `archiving run ${c.namespace}/${c.name}`,
      `INSERT INTO runs (uid, namespace, name, workflow, issue_id, issue_identifier, phase,
         reason, created_at, deleted_at, input_tokens, output_tokens, total_tokens, record)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (uid) DO UPDATE SET
         namespace = EXCLUDED.namespace, name = EXCLUDED.name, workflow = EXCLUDED.workflow,
         issue_id = EXCLUDED.issue_id, issue_identifier = EXCLUDED.issue_identifier,
         phase = EXCLUDED.phase, reason = EXCLUDED.reason, created_at = EXCLUDED.created_at,
         deleted_at = COALESCE(EXCLUDED.deleted_at, runs.deleted_at),
         input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens,
         total_tokens = EXCLUDED.total_tokens, record = EXCLUDED.record`,
      records.runRow(c, text),
    );
  }

  async putAttempt(attempt: archive.AttemptRecord): Promise<void> {
    const c = records.attemptColumns(attempt);
    await this.query(
      `archiving attempt ${c.attempt} of slot ${c.slot} of run ${c.runUid}`,
      `INSERT INTO attempts (run_uid, slot, attempt, pod_uid, phase, record)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (run_uid, slot, attempt) DO UPDATE SET pod_uid = EXCLUDED.pod_uid,
         phase = EXCLUDED.phase, record = EXCLUDED.record`,
      [c.runUid, c.slot, c.attempt, text(c.podUid), text(c.phase), c.record],
    );
  }

  async putEvents(events: readonly archive.EventRecord[]): Promise<void> {
    // One statement per batch; the same Event twice in a batch is kept once (the last), as
    // ON CONFLICT may not touch a row twice in one statement.
    const byUid = new Map(
      events.map((event) => records.eventColumns(event)).map((c) => [c.uid, c]),
    );
    if (byUid.size === 0) return;
    const batch = [...byUid.values()];
    await this.query(
      `archiving ${batch.length} Events`,
      `INSERT INTO events (uid, run_uid, first_time, record)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
       ON CONFLICT (uid) DO UPDATE SET run_uid = EXCLUDED.run_uid,
         first_time = EXCLUDED.first_time, record = EXCLUDED.record`,
      [
        batch.map((c) => c.uid),
        batch.map((c) => c.runUid),
        batch.map((c) => c.firstTime),
        batch.map((c) => c.record),
      ],
    );
  }

  async appendLog(piece: archive.LogAppend): Promise<void> {
    records.logAppendBytes(piece);
    const data = Buffer.from(piece.data, 'utf8');
    const cap = piece.capBytes;
    await this.transaction(`archiving the log of Pod ${piece.podUid}`, async (client) => {
      // The Pod's row is the lock: appends to one log (two replicas, a retry racing the
      // original) apply one after the other, so the kept bytes and the cap hold.
      const locked = await client.query(
        `INSERT INTO log_pods (pod_uid, run_uid, kept_bytes, dropped_end) VALUES ($1, $2, 0, 0)
         ON CONFLICT (pod_uid) DO UPDATE SET run_uid = log_pods.run_uid
         RETURNING kept_bytes, dropped_end`,
        [piece.podUid, piece.runUid],
      );
      const pod = locked.rows[0] as Row;
      let state = { keptBytes: Number(pod.kept_bytes), droppedEnd: Number(pod.dropped_end) };
      // A piece the cap dropped once stays dropped when a re-read of the log sends it again.
      if (!acceptsPiece(piece.offset, cap, state)) return;
      const appended = await client.query(
        `WITH piece AS (
           INSERT INTO log_pieces (pod_uid, byte_offset, run_uid, slot, attempt, bytes, data)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (pod_uid, byte_offset) DO NOTHING
           RETURNING bytes)
         UPDATE log_pods SET kept_bytes = kept_bytes + (SELECT bytes FROM piece)
         WHERE pod_uid = $1 AND EXISTS (SELECT 1 FROM piece)
         RETURNING kept_bytes`,
        [piece.podUid, piece.offset, piece.runUid, piece.slot, piece.attempt, data.length, data],
      );
      const kept = appended.rows[0] as Row | undefined;
      // Already there (a re-read, or another replica's write of the same piece).
      if (kept === undefined) return;
      state = { ...state, keptBytes: Number(kept.kept_bytes) };
      if (state.keptBytes <= cap) return;
      while (state.keptBytes > cap) {
        const page = await client.query(
          `SELECT byte_offset, bytes FROM log_pieces
           WHERE pod_uid = $1 AND byte_offset * 2 >= $2::bigint
           ORDER BY byte_offset LIMIT ${DROP_PAGE}`,
          [piece.podUid, cap],
        );
        const spans = page.rows.map((row: Row) => ({
          offset: Number(row.byte_offset),
          bytes: Number(row.bytes),
        }));
        const plan = planDrops(state, cap, spans);
        if (plan.drop.length > 0) {
          await client.query(
            'DELETE FROM log_pieces WHERE pod_uid = $1 AND byte_offset = ANY($2::bigint[])',
            [piece.podUid, plan.drop],
          );
        }
        state = plan.state;
        if (plan.done || spans.length < DROP_PAGE) break;
      }
      await client.query(
        'UPDATE log_pods SET kept_bytes = $2, dropped_end = $3 WHERE pod_uid = $1',
        [piece.podUid, state.keptBytes, state.droppedEnd],
      );
    });
  }

  async listRuns(query: archive.RunQuery): Promise<archive.RunPage> {
    const q = normalizeRunQuery(query);
    if (q.namespaces !== undefined && q.namespaces.length === 0) return { runs: [] };
    const values: unknown[] = [];
    const sql = runListSql(q, {
      param: (value) => {
        values.push(value);
        return `$${values.length}`;
      },
      namespaceIn: (namespaces, param) => `namespace = ANY(${param(namespaces.map(text))}::text[])`,
      text,
    });
    const rows = await this.query('listing runs', sql, values);
    return runPageOf(rows, q.limit, runOf, (row) => ({
      createdAt: String(row.created_at),
      uid: String(row.uid),
    }));
  }

  async getRun(ref: archive.RunRef): Promise<archive.ArchivedRun | undefined> {
    let rows: Row[];
    if (ref.uid !== undefined) {
      rows = await this.query(
        `reading run ${ref.uid}`,
        'SELECT uid, deleted_at, record FROM runs WHERE uid = $1',
        [ref.uid],
      );
    } else if (ref.namespace !== undefined && ref.name !== undefined) {
      rows = await this.query(
        `reading run ${ref.namespace}/${ref.name}`,
        `SELECT uid, deleted_at, record FROM runs WHERE namespace = $1 AND name = $2
         ORDER BY created_at DESC, uid DESC LIMIT 1`,
        [text(ref.namespace), text(ref.name)],
      );
    } else {
      throw new ArchiveError(
        'archive_query_invalid',
        'a run is named by its uid, or by namespace and name',
      );
    }
    const first = rows[0];
    if (first === undefined) return undefined;
    const run = runOf(first);
    const [attempts, events] = await Promise.all([
      this.query(
        `reading the attempts of run ${run.uid}`,
        'SELECT record FROM attempts WHERE run_uid = $1 ORDER BY slot, attempt',
        [run.uid],
      ),
      this.query(
        `reading the Events of run ${run.uid}`,
        'SELECT record FROM events WHERE run_uid = $1 ORDER BY first_time, uid',
        [run.uid],
      ),
    ]);
    return {
      run,
      attempts: attempts.map((row) => JSON.parse(String(row.record)) as archive.AttemptRecord),
      events: events.map((row) => JSON.parse(String(row.record)) as archive.EventRecord),
    };
  }

  readLog(runUid: string, filter: archive.LogFilter = {}): AsyncIterable<archive.LogEntry> {
    return withElisions(this.pieces(runUid, filter), async (podUid) => {
      const rows = await this.query(
        `reading the log of run ${runUid}`,
        'SELECT dropped_end FROM log_pods WHERE pod_uid = $1',
        [podUid],
      );
      return Number(rows[0]?.dropped_end ?? 0);
    });
  }

  /**
   * The run's pieces in order, in keyset pages of at most LOG_PAGE_PIECES pieces or about
   * LOG_PAGE_BYTES: a 32 MiB log is never one result, and no connection is held while the
   * reader is slow.
   */
  private async *pieces(runUid: string, filter: archive.LogFilter): AsyncGenerator<StoredPiece> {
    let after: PieceRow | undefined;
    for (;;) {
      const values: unknown[] = [runUid];
      const where = ['run_uid = $1'];
      if (filter.slot !== undefined) {
        values.push(filter.slot);
        where.push(`slot = $${values.length}`);
      }
      if (filter.attempt !== undefined) {
        values.push(filter.attempt);
        where.push(`attempt = $${values.length}`);
      }
      if (after !== undefined) {
        values.push(after.slot, after.attempt, after.pod_uid, after.byte_offset);
        const n = values.length;
        where.push(
          `(slot, attempt, pod_uid, byte_offset) > ($${n - 3}, $${n - 2}, $${n - 1}, $${n})`,
        );
      }
      const rows = (await this.query(
        `reading the log of run ${runUid}`,
        `SELECT slot, attempt, pod_uid, byte_offset, bytes, data FROM (
           SELECT slot, attempt, pod_uid, byte_offset, bytes, data,
             sum(bytes) OVER (ORDER BY slot, attempt, pod_uid, byte_offset) AS upto
           FROM log_pieces WHERE ${where.join(' AND ')}
           ORDER BY slot, attempt, pod_uid, byte_offset LIMIT ${LOG_PAGE_PIECES}) page
         WHERE upto - bytes < ${LOG_PAGE_BYTES}
         ORDER BY slot, attempt, pod_uid, byte_offset`,
        values,
      )) as unknown as PieceRow[];
      for (const row of rows) {
        yield {
          podUid: row.pod_uid,
          slot: row.slot,
          attempt: row.attempt,
          offset: Number(row.byte_offset),
          bytes: Number(row.bytes),
          data: row.data.toString('utf8'),
        };
      }
      after = rows.at(-1);
      if (after === undefined) return;
    }
  }

  async usageByDay(query: archive.UsageQuery): Promise<archive.UsageRow[]> {
    const w = normalizeUsageQuery(query);
    if (w.namespaces !== undefined && w.namespaces.length === 0) return [];
    const where: string[] = [];
    const values: unknown[] = [];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    if (w.namespaces !== undefined)
      where.push(`namespace = ANY(${param(w.namespaces.map(text))}::text[])`);
    if (w.workflow !== undefined) where.push(`workflow = ${param(text(w.workflow))}`);
    if (w.fromTime !== undefined) where.push(`created_at >= ${param(w.fromTime)}`);
    if (w.toTime !== undefined) where.push(`created_at < ${param(w.toTime)}`);
    const rows = await this.query(
      'summing usage by day',
      `SELECT namespace, workflow, substr(created_at, 1, 10) AS day,
         count(*)::integer AS runs, count(*) FILTER (WHERE phase = 'Failed')::integer AS failed,
         sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens,
         sum(total_tokens)::float8 AS total_tokens
       FROM runs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       GROUP BY namespace, workflow, day
       ORDER BY day, namespace, workflow`,
      values,
    );
    return rows.map((row) => ({
      namespace: String(row.namespace),
      workflow: String(row.workflow),
      day: String(row.day),
      runs: Number(row.runs),
      failed: Number(row.failed),
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      totalTokens: Number(row.total_tokens),
    }));
  }

  async close(): Promise<void> {
    if (this.pool.ended) return;
    await this.pool.end();
  }
}

/**
 * PostgreSQL's text refuses a NUL: the columns queries filter by drop it (the record, JSON,
 * keeps it as \u0000), and so do the values they are compared with.
 */
function text(value: string): string {
  return value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
}

function runOf(row: Row): archive.RunRecord {
  return records.runFromRow(
    String(row.record),
    typeof row.deleted_at === 'string' ? row.deleted_at : null,
  );
}
