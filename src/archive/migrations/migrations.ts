/**
 * The archive's schema, as versioned migrations: one SQL script per dialect per version, run
 * in order, each once, inside one transaction with the row that records it in
 * `schema_migrations`. A released migration is never edited: a change is a new version.
 *
 * Times are canonical ISO strings (`2026-01-02T03:04:05.000Z`, from Date#toISOString) in TEXT
 * columns on both dialects: they sort as the instants they name, and both stores page with
 * the same opaque `continue` token. Each record is kept whole as JSON (`record`); the other
 * columns are the ones queries filter and sort by.
 */
import { ArchiveError } from '../types.js';

export interface Migration {
  version: number;
  description: string;
  sqlite: string;
  postgres: string;
}

/** The table that records which versions ran (created before any migration, by the store). */
export const SCHEMA_MIGRATIONS_DDL = {
  sqlite:
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)',
  postgres:
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)',
} as const;

const V1_SQLITE = `
CREATE TABLE runs (
  uid TEXT PRIMARY KEY,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  workflow TEXT NOT NULL,
  issue_id TEXT NOT NULL,
  issue_identifier TEXT NOT NULL,
  phase TEXT NOT NULL,
  reason TEXT,
  created_at TEXT NOT NULL,
  deleted_at TEXT,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  total_tokens INTEGER NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX runs_created ON runs (created_at DESC, uid DESC);
CREATE INDEX runs_namespace ON runs (namespace, created_at DESC, uid DESC);
CREATE INDEX runs_namespace_name ON runs (namespace, name, created_at DESC, uid DESC);
CREATE INDEX runs_workflow ON runs (workflow, created_at DESC, uid DESC);
CREATE INDEX runs_issue_identifier ON runs (issue_identifier, created_at DESC, uid DESC);
CREATE INDEX runs_issue_id ON runs (issue_id, created_at DESC, uid DESC);
CREATE INDEX runs_phase ON runs (phase, created_at DESC, uid DESC);
CREATE INDEX runs_reason ON runs (reason, created_at DESC, uid DESC);
CREATE INDEX runs_deleted ON runs (deleted_at, created_at DESC, uid DESC);

CREATE TABLE attempts (
  run_uid TEXT NOT NULL,
  slot INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  pod_uid TEXT NOT NULL,
  phase TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (run_uid, slot, attempt)
);

CREATE TABLE events (
  uid TEXT PRIMARY KEY,
  run_uid TEXT NOT NULL,
  first_time TEXT,
  record TEXT NOT NULL
);
CREATE INDEX events_run ON events (run_uid, first_time, uid);

CREATE TABLE log_pieces (
  pod_uid TEXT NOT NULL,
  byte_offset INTEGER NOT NULL,
  run_uid TEXT NOT NULL,
  slot INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (pod_uid, byte_offset)
);
CREATE INDEX log_pieces_run ON log_pieces (run_uid, slot, attempt, pod_uid, byte_offset);

-- The log cap's bookkeeping, one row per Pod: the bytes its kept pieces hold, and the end of
-- the last piece dropped (a re-read of the log re-sends dropped pieces: they stay dropped).
CREATE TABLE log_pods (
  pod_uid TEXT PRIMARY KEY,
  run_uid TEXT NOT NULL,
  kept_bytes INTEGER NOT NULL,
  dropped_end INTEGER NOT NULL
);
`;

// The same schema in PostgreSQL 15: BIGINT for byte counts and tokens, JSON as TEXT (the store
// reads records whole and never queries inside them; JSON writes a NUL as \u0000, which TEXT
// takes and jsonb would refuse), log data as BYTEA (a text column refuses a NUL byte, which a
// log may hold), and the byte order ("C") for the keys that pages sort by, so that both
// stores order ties and times alike whatever the database's locale.
const V1_POSTGRES = V1_SQLITE.replace(/^ {2}data TEXT NOT NULL/m, '  data BYTEA NOT NULL')
  .replace(
    /(input_tokens|output_tokens|total_tokens|byte_offset|bytes|kept_bytes|dropped_end) INTEGER/g,
    '$1 BIGINT',
  )
  .replace(/^ {2}(uid|created_at|pod_uid) TEXT/gm, '  $1 TEXT COLLATE "C"')
  .replace(/^ {2}(first_time|deleted_at) TEXT/gm, '  $1 TEXT COLLATE "C"');

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs, attempts, events, log pieces and the log cap bookkeeping',
    sqlite: V1_SQLITE,
    postgres: V1_POSTGRES,
  },
];

/**
 * The migrations a database still needs, in order, given the versions it has applied. A
 * database that has applied a version this code does not know was written by newer code:
 * writing to it could break that code's invariants, so it is refused.
 */
export function pendingMigrations(
  applied: readonly number[],
  known: readonly Migration[] = MIGRATIONS,
): Migration[] {
  const newest = known.reduce((max, m) => Math.max(max, m.version), 0);
  const ahead = applied.filter((v) => v > newest);
  if (ahead.length > 0) {
    throw new ArchiveError(
      'archive_schema_newer',
      `the archive's schema is at version ${Math.max(...ahead)}, newer than this Lorenz knows ` +
        `(${newest}): run a Lorenz at least as new as the one that wrote it`,
    );
  }
  const done = new Set(applied);
  return [...known].sort((a, b) => a.version - b.version).filter((m) => !done.has(m.version));
}
