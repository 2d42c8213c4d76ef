// The SQLite archive's upserts: a write of a record that is there already replaces it, so a
// restarted archiver that writes again what it wrote before changes nothing.

/** A run marked deleted stays deleted when a late write of it (a restart's replay) carries no deletion time. */
export const UPSERT_RUN = `
  INSERT INTO runs (uid, namespace, name, workflow, issue_id, issue_identifier, phase,
  reason, created_at, deleted_at, input_tokens, output_tokens, total_tokens, record)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (uid) DO UPDATE SET namespace = excluded.namespace, name = excluded.name,
  workflow = excluded.workflow, issue_id = excluded.issue_id,
  issue_identifier = excluded.issue_identifier, phase = excluded.phase,
  reason = excluded.reason, created_at = excluded.created_at,
  deleted_at = COALESCE(excluded.deleted_at, runs.deleted_at),
  input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
  total_tokens = excluded.total_tokens, record = excluded.record`;

export const UPSERT_ATTEMPT = `
  INSERT INTO attempts (run_uid, slot, attempt, pod_uid, phase, record)
  VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (run_uid, slot, attempt) DO UPDATE SET pod_uid = excluded.pod_uid,
  phase = excluded.phase, record = excluded.record`;

export const UPSERT_EVENT = `
  INSERT INTO events (uid, run_uid, first_time, record) VALUES (?, ?, ?, ?)
  ON CONFLICT (uid) DO UPDATE SET run_uid = excluded.run_uid,
  first_time = excluded.first_time, record = excluded.record`;
