/**
 * The archive on PostgreSQL, for clusters that run more than one controller replica: every
 * replica may open it, migrations run once under an advisory lock, every write is an upsert
 * by its natural key, and a log append and its cap are one transaction, so two replicas (or a
 * restarted one) writing the same pieces leave them once and the cap holds.
 */
import { Pool, type PoolClient, type PoolConfig } from 'pg';
import { MIGRATIONS } from './migrations/index.js';
import { archiveErrorOf } from './postgres-errors.js';
import {
  ArchiveError,
  type ArchiveStore,
  type ArchivedRun,
  type AttemptRecord,
  type EventRecord,
  type LogAppend,
  type LogEntry,
  type LogFilter,
  type RunPage,
  type RunQuery,
  type RunRecord,
  type RunRef,
  type UsageQuery,
  type UsageRow,
} from './types.js';

export interface PostgresArchiveOptions {
  /** Most connections of this replica (default 4). */
  maxConnections?: number;
  /** How long to wait for a connection, in ms (default 5000). */
  connectTimeoutMs?: number;
  /** How long one statement may run, server and client side, in ms (default 30 000). */
  statementTimeoutMs?: number;
}

/** One key for the schema's advisory lock, shared by every replica ("lorenz" in ASCII). */
const MIGRATION_LOCK = '119165345181050';
/** A page of a log read: at most this many pieces or about this many bytes. */
const LOG_PAGE_PIECES = 1000;
const LOG_PAGE_BYTES = 4 * 1024 * 1024;
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/** The URL with its password replaced by ***: what is logged and printed. */
export function maskPostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    // Not a URL new URL() reads: mask what sits between "user:" and "@".
    return url.replace(/(\/\/[^:/@]*:)[^@]*@/, '$1***@');
  }
}

export async function openPostgresArchive(
  url: string,
  options: PostgresArchiveOptions = {},
): Promise<ArchiveStore> {
  const location = maskPostgresUrl(url);
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
  return store;
}

type Row = Record<string, unknown>;

class PostgresArchive implements ArchiveStore {
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
    const known = Math.max(...MIGRATIONS.map((m) => m.version));
    await this.transaction('migrating the schema', async (client) => {
      // Transaction-scoped: replicas starting at once wait here, and the lock goes with the
      // transaction even when the connection dies.
      await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK]);
      await client.query(
        `CREATE TABLE IF NOT EXISTS archive_schema_migrations (
           version integer PRIMARY KEY,
           applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const { rows } = await client.query('SELECT version FROM archive_schema_migrations');
      const applied = new Set(rows.map((row: Row) => Number(row.version)));
      const newest = Math.max(0, ...applied);
      if (newest > known) {
        throw new ArchiveError(
          'archive_schema_newer',
          `archive ${this.location}: the schema is at version ${newest}, newer than this Lorenz knows (${known}); upgrade Lorenz`,
        );
      }
      for (const migration of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
        if (applied.has(migration.version)) continue;
        await client.query(migration.postgres);
        await client.query('INSERT INTO archive_schema_migrations (version) VALUES ($1)', [
          migration.version,
        ]);
      }
    });
  }

  async putRun(run: RunRecord): Promise<void> {
    const { deletedAt, ...kept } = run;
    await this.query(
      `archiving run ${run.namespace}/${run.name}`,
      `INSERT INTO archive_runs (uid, namespace, name, workflow, issue_id, issue_identifier, phase,
         reason, created_at, deleted_at, input_tokens, output_tokens, total_tokens, record)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::timestamptz, $10, $11, $12, $13, $14)
       ON CONFLICT (uid) DO UPDATE SET
         namespace = EXCLUDED.namespace, name = EXCLUDED.name, workflow = EXCLUDED.workflow,
         issue_id = EXCLUDED.issue_id, issue_identifier = EXCLUDED.issue_identifier,
         phase = EXCLUDED.phase, reason = EXCLUDED.reason, created_at = EXCLUDED.created_at,
         deleted_at = COALESCE(EXCLUDED.deleted_at, archive_runs.deleted_at),
         input_tokens = EXCLUDED.input_tokens, output_tokens = EXCLUDED.output_tokens,
         total_tokens = EXCLUDED.total_tokens, record = EXCLUDED.record`,
      [
        run.uid,
        column(run.namespace),
        column(run.name),
        column(run.workflow),
        column(run.issueId),
        column(run.issueIdentifier),
        column(run.phase),
        run.reason === undefined ? null : column(run.reason),
        run.createdAt,
        deletedAt ?? null,
        run.usage.inputTokens,
        run.usage.outputTokens,
        run.usage.totalTokens,
        JSON.stringify(kept),
      ],
    );
  }

  async putAttempt(attempt: AttemptRecord): Promise<void> {
    await this.query(
      `archiving attempt ${attempt.attempt} of slot ${attempt.slot} of run ${attempt.runUid}`,
      `INSERT INTO archive_attempts (run_uid, slot, attempt, record) VALUES ($1, $2, $3, $4)
       ON CONFLICT (run_uid, slot, attempt) DO UPDATE SET record = EXCLUDED.record`,
      [attempt.runUid, attempt.slot, attempt.attempt, JSON.stringify(attempt)],
    );
  }

  async putEvents(events: readonly EventRecord[]): Promise<void> {
    // One statement per batch; the same Event twice in a batch is kept once (the last), as
    // ON CONFLICT may not touch a row twice in one statement.
    const byUid = new Map(events.map((event) => [event.uid, event]));
    if (byUid.size === 0) return;
    const batch = [...byUid.values()];
    await this.query(
      `archiving ${batch.length} Events`,
      `INSERT INTO archive_events (uid, run_uid, event_time, record)
       SELECT * FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::text[])
       ON CONFLICT (uid) DO UPDATE SET run_uid = EXCLUDED.run_uid,
         event_time = EXCLUDED.event_time, record = EXCLUDED.record`,
      [
        batch.map((e) => e.uid),
        batch.map((e) => e.runUid),
        batch.map((e) => e.firstTime ?? e.lastTime ?? null),
        batch.map((e) => JSON.stringify(e)),
      ],
    );
  }

  async appendLog(piece: LogAppend): Promise<void> {
    if (!Number.isSafeInteger(piece.offset) || piece.offset < 0) {
      throw new ArchiveError(
        'archive_query_invalid',
        `log piece of Pod ${piece.podUid}: offset ${piece.offset} is not a whole number ≥ 0`,
      );
    }
    if (!Number.isSafeInteger(piece.capBytes) || piece.capBytes <= 0) {
      throw new ArchiveError(
        'archive_query_invalid',
        `log piece of Pod ${piece.podUid}: capBytes ${piece.capBytes} is not a whole number > 0`,
      );
    }
    const data = Buffer.from(piece.data, 'utf8');
    if (data.length === 0) return;
    await this.transaction(`archiving the log of Pod ${piece.podUid}`, async (client) => {
      // One statement: the piece (once: a re-read writes it again), then the Pod's count of
      // kept bytes. The Pod's row is the lock: appends to one log (two replicas, a retry
      // racing the original) apply one after the other, so the count and the cap hold.
      const appended = await client.query(
        `WITH piece AS (
           INSERT INTO archive_log_pieces (pod_uid, byte_offset, run_uid, slot, attempt, bytes, data)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (pod_uid, byte_offset) DO NOTHING
           RETURNING bytes)
         INSERT INTO archive_log_pods (pod_uid, run_uid, slot, attempt, kept_bytes)
         VALUES ($1, $3, $4, $5, (SELECT coalesce(sum(bytes), 0) FROM piece))
         ON CONFLICT (pod_uid) DO UPDATE SET kept_bytes = archive_log_pods.kept_bytes + EXCLUDED.kept_bytes
         RETURNING kept_bytes`,
        [piece.podUid, piece.offset, piece.runUid, piece.slot, piece.attempt, data.length, data],
      );
      let kept = Number((appended.rows[0] as Row | undefined)?.kept_bytes ?? 0);
      // The cap: the head (pieces that start in its first half) is always kept; past the cap
      // the oldest piece after the head goes, one at a time, until the log fits.
      while (kept > piece.capBytes) {
        const trimmed = await client.query(
          `WITH dropped AS (
             DELETE FROM archive_log_pieces WHERE (pod_uid, byte_offset) = (
               SELECT pod_uid, byte_offset FROM archive_log_pieces
               WHERE pod_uid = $1 AND byte_offset * 2 >= $2::bigint
               ORDER BY byte_offset LIMIT 1)
             RETURNING bytes)
           UPDATE archive_log_pods SET kept_bytes = kept_bytes - (SELECT sum(bytes) FROM dropped)
           WHERE pod_uid = $1 AND EXISTS (SELECT 1 FROM dropped)
           RETURNING kept_bytes`,
          [piece.podUid, piece.capBytes],
        );
        const row = trimmed.rows[0] as Row | undefined;
        // Only head pieces left: the head is kept even past the cap.
        if (row === undefined) break;
        kept = Number(row.kept_bytes);
      }
    });
  }

  async markDeleted(uid: string, at: string): Promise<void> {
    await this.query(
      `marking run ${uid} deleted`,
      'UPDATE archive_runs SET deleted_at = $2 WHERE uid = $1',
      [uid, at],
    );
  }

  async listRuns(query: RunQuery): Promise<RunPage> {
    const limit = pageLimit(query.limit);
    const where: string[] = [];
    const values: unknown[] = [];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    if (query.namespaces !== undefined)
      where.push(`namespace = ANY(${param([...query.namespaces])}::text[])`);
    if (query.workflow !== undefined) where.push(`workflow = ${param(column(query.workflow))}`);
    if (query.issue !== undefined) {
      const issue = param(column(query.issue));
      where.push(`(issue_identifier = ${issue} OR issue_id = ${issue})`);
    }
    if (query.phase !== undefined) where.push(`phase = ${param(column(query.phase))}`);
    if (query.reason !== undefined) where.push(`reason = ${param(column(query.reason))}`);
    if (query.since !== undefined)
      where.push(`created_at >= ${param(time('since', query.since))}::timestamptz`);
    if (query.until !== undefined)
      where.push(`created_at < ${param(time('until', query.until))}::timestamptz`);
    if (query.includeLive === false) where.push('deleted_at IS NOT NULL');
    if (query.continue !== undefined) {
      const after = decodeContinue(query.continue);
      where.push(
        `(created_at, uid) < (${param(after.createdAt)}::timestamptz, ${param(after.uid)})`,
      );
    }
    const rows = await this.query(
      'listing runs',
      `SELECT record, deleted_at FROM archive_runs
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY created_at DESC, uid DESC LIMIT ${param(limit + 1)}`,
      values,
    );
    const runs = rows.slice(0, limit).map(runOf);
    const last = runs[runs.length - 1];
    return rows.length > limit && last !== undefined
      ? { runs, continue: encodeContinue(last) }
      : { runs };
  }

  async getRun(ref: RunRef): Promise<ArchivedRun | undefined> {
    let rows: Row[];
    if (ref.uid !== undefined) {
      rows = await this.query(
        `reading run ${ref.uid}`,
        'SELECT record, deleted_at FROM archive_runs WHERE uid = $1',
        [ref.uid],
      );
    } else if (ref.namespace !== undefined && ref.name !== undefined) {
      rows = await this.query(
        `reading run ${ref.namespace}/${ref.name}`,
        `SELECT record, deleted_at FROM archive_runs WHERE namespace = $1 AND name = $2
         ORDER BY created_at DESC, uid DESC LIMIT 1`,
        [column(ref.namespace), column(ref.name)],
      );
    } else {
      throw new ArchiveError(
        'archive_query_invalid',
        'a run is found by uid, or by namespace and name',
      );
    }
    const first = rows[0];
    if (first === undefined) return undefined;
    const run = runOf(first);
    const [attempts, events] = await Promise.all([
      this.query(
        `reading the attempts of run ${run.uid}`,
        'SELECT record FROM archive_attempts WHERE run_uid = $1 ORDER BY slot, attempt',
        [run.uid],
      ),
      this.query(
        `reading the Events of run ${run.uid}`,
        'SELECT record FROM archive_events WHERE run_uid = $1 ORDER BY event_time NULLS LAST, uid',
        [run.uid],
      ),
    ]);
    return {
      run,
      attempts: attempts.map((row) => JSON.parse(String(row.record)) as AttemptRecord),
      events: events.map((row) => JSON.parse(String(row.record)) as EventRecord),
    };
  }

  async *readLog(runUid: string, filter: LogFilter = {}): AsyncIterable<LogEntry> {
    // Keyset pages of at most LOG_PAGE_PIECES pieces or ~LOG_PAGE_BYTES: a 32 MiB log is
    // never one result, and no connection is held while the reader is slow.
    let after: [number, number, string, number] | undefined;
    let expected: { podUid: string; offset: number } | undefined;
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
        values.push(...after);
        const n = values.length;
        where.push(
          `(slot, attempt, pod_uid, byte_offset) > ($${n - 3}, $${n - 2}, $${n - 1}, $${n})`,
        );
      }
      const rows = await this.query(
        `reading the log of run ${runUid}`,
        `SELECT slot, attempt, pod_uid, byte_offset, bytes, data FROM (
           SELECT slot, attempt, pod_uid, byte_offset, bytes, data,
             sum(bytes) OVER (ORDER BY slot, attempt, pod_uid, byte_offset) AS upto
           FROM archive_log_pieces WHERE ${where.join(' AND ')}
           ORDER BY slot, attempt, pod_uid, byte_offset LIMIT ${LOG_PAGE_PIECES}) page
         WHERE upto - bytes < ${LOG_PAGE_BYTES}
         ORDER BY slot, attempt, pod_uid, byte_offset`,
        values,
      );
      for (const row of rows) {
        const piece = {
          podUid: String(row.pod_uid),
          slot: Number(row.slot),
          attempt: Number(row.attempt),
          offset: Number(row.byte_offset),
          data: (row.data as Buffer).toString('utf8'),
        };
        const from = expected?.podUid === piece.podUid ? expected.offset : 0;
        if (piece.offset > from) {
          yield {
            kind: 'elided',
            podUid: piece.podUid,
            slot: piece.slot,
            attempt: piece.attempt,
            offset: from,
            bytes: piece.offset - from,
          };
        }
        yield { kind: 'data', piece };
        expected = { podUid: piece.podUid, offset: piece.offset + Number(row.bytes) };
        after = [piece.slot, piece.attempt, piece.podUid, piece.offset];
      }
      if (rows.length === 0) return;
    }
  }

  async usageByDay(query: UsageQuery): Promise<UsageRow[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    if (query.namespaces !== undefined)
      where.push(`namespace = ANY(${param([...query.namespaces])}::text[])`);
    if (query.workflow !== undefined) where.push(`workflow = ${param(column(query.workflow))}`);
    const day = "(created_at AT TIME ZONE 'UTC')::date";
    if (query.from !== undefined)
      where.push(`${day} >= ${param(utcDay('from', query.from))}::date`);
    if (query.to !== undefined) where.push(`${day} <= ${param(utcDay('to', query.to))}::date`);
    const rows = await this.query(
      'summing usage by day',
      `SELECT namespace, workflow, to_char(${day}, 'YYYY-MM-DD') AS day,
         count(*)::integer AS runs, count(*) FILTER (WHERE phase = 'Failed')::integer AS failed,
         sum(input_tokens)::float8 AS input_tokens, sum(output_tokens)::float8 AS output_tokens,
         sum(total_tokens)::float8 AS total_tokens
       FROM archive_runs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       GROUP BY namespace, workflow, ${day}
       ORDER BY ${day}, namespace, workflow`,
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

/** PostgreSQL's text refuses a NUL: the filter and sort columns drop it (the record keeps it). */
function column(value: string): string {
  return value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
}

function runOf(row: Row): RunRecord {
  const run = JSON.parse(String(row.record)) as RunRecord;
  if (typeof row.deleted_at === 'string') run.deletedAt = row.deleted_at;
  return run;
}

function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new ArchiveError('archive_query_invalid', `limit ${limit} is not a whole number ≥ 1`);
  }
  return Math.min(limit, MAX_LIMIT);
}

function time(name: string, value: string): string {
  if (Number.isNaN(Date.parse(value))) {
    throw new ArchiveError(
      'archive_query_invalid',
      `${name} ${JSON.stringify(value)} is not an RFC 3339 time`,
    );
  }
  return value;
}

function utcDay(name: string, value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    throw new ArchiveError(
      'archive_query_invalid',
      `${name} ${JSON.stringify(value)} is not a day (YYYY-MM-DD)`,
    );
  }
  return value;
}

/** The `continue` token: the last run's (createdAt, uid), opaque to callers. */
function encodeContinue(run: RunRecord): string {
  return Buffer.from(JSON.stringify([run.createdAt, run.uid]), 'utf8').toString('base64url');
}

function decodeContinue(token: string): { createdAt: string; uid: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      !Number.isNaN(Date.parse(value[0]))
    ) {
      return { createdAt: value[0], uid: value[1] };
    }
  } catch {
    // Falls through to the error below.
  }
  throw new ArchiveError(
    'archive_query_invalid',
    `continue token ${JSON.stringify(token)} is not one this archive gave`,
  );
}
