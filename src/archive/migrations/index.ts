/**
 * The archive's schema, versioned: each store applies, in order, the versions it has not
 * recorded yet (in archive_schema_migrations), each in the dialect of its database. A version
 * once released is never edited: a change of schema is a new version.
 *
 * Every record is kept whole as JSON text (`record`): the columns beside it are what queries
 * filter and sort by. JSON text rather than PostgreSQL's jsonb, which refuses the \u0000 that
 * a redacted record may still hold; log data as bytes, since a text column refuses a NUL byte.
 */
export interface Migration {
  version: number;
  sqlite: string;
  postgres: string;
}

const V1_POSTGRES = `
CREATE TABLE archive_runs (
  uid text PRIMARY KEY,
  namespace text NOT NULL,
  name text NOT NULL,
  workflow text NOT NULL,
  issue_id text NOT NULL,
  issue_identifier text NOT NULL,
  phase text NOT NULL,
  reason text,
  created_at timestamptz NOT NULL,
  deleted_at text,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  total_tokens bigint NOT NULL DEFAULT 0,
  record text NOT NULL
);
CREATE INDEX archive_runs_newest ON archive_runs (created_at DESC, uid DESC);
CREATE INDEX archive_runs_namespace ON archive_runs (namespace, created_at DESC, uid DESC);
CREATE INDEX archive_runs_name ON archive_runs (namespace, name, created_at DESC);
CREATE INDEX archive_runs_workflow ON archive_runs (workflow, created_at DESC, uid DESC);
CREATE INDEX archive_runs_issue_identifier ON archive_runs (issue_identifier, created_at DESC);
CREATE INDEX archive_runs_issue_id ON archive_runs (issue_id, created_at DESC);

CREATE TABLE archive_attempts (
  run_uid text NOT NULL,
  slot integer NOT NULL,
  attempt integer NOT NULL,
  record text NOT NULL,
  PRIMARY KEY (run_uid, slot, attempt)
);

CREATE TABLE archive_events (
  uid text PRIMARY KEY,
  run_uid text NOT NULL,
  event_time timestamptz,
  record text NOT NULL
);
CREATE INDEX archive_events_run ON archive_events (run_uid, event_time, uid);

CREATE TABLE archive_log_pods (
  pod_uid text PRIMARY KEY,
  run_uid text NOT NULL,
  slot integer NOT NULL,
  attempt integer NOT NULL,
  kept_bytes bigint NOT NULL DEFAULT 0
);

CREATE TABLE archive_log_pieces (
  pod_uid text NOT NULL,
  byte_offset bigint NOT NULL,
  run_uid text NOT NULL,
  slot integer NOT NULL,
  attempt integer NOT NULL,
  bytes integer NOT NULL,
  data bytea NOT NULL,
  PRIMARY KEY (pod_uid, byte_offset)
);
CREATE INDEX archive_log_pieces_run ON archive_log_pieces (run_uid, slot, attempt, pod_uid, byte_offset);
`;

const V1_SQLITE = `
CREATE TABLE archive_runs (
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
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens INTEGER NOT NULL DEFAULT 0,
  record TEXT NOT NULL
);
CREATE INDEX archive_runs_newest ON archive_runs (created_at DESC, uid DESC);
CREATE INDEX archive_runs_namespace ON archive_runs (namespace, created_at DESC, uid DESC);
CREATE INDEX archive_runs_name ON archive_runs (namespace, name, created_at DESC);
CREATE TABLE archive_attempts (
  run_uid TEXT NOT NULL,
  slot INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (run_uid, slot, attempt)
);
CREATE TABLE archive_events (
  uid TEXT PRIMARY KEY,
  run_uid TEXT NOT NULL,
  event_time TEXT,
  record TEXT NOT NULL
);
CREATE INDEX archive_events_run ON archive_events (run_uid, event_time, uid);
CREATE TABLE archive_log_pods (
  pod_uid TEXT PRIMARY KEY,
  run_uid TEXT NOT NULL,
  slot INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  kept_bytes INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE archive_log_pieces (
  pod_uid TEXT NOT NULL,
  byte_offset INTEGER NOT NULL,
  run_uid TEXT NOT NULL,
  slot INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (pod_uid, byte_offset)
);
CREATE INDEX archive_log_pieces_run ON archive_log_pieces (run_uid, slot, attempt, pod_uid, byte_offset);
`;

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, sqlite: V1_SQLITE, postgres: V1_POSTGRES },
];
