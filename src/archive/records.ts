/**
 * Records to the columns both stores keep, and back. Each record is kept whole as JSON; the
 * columns beside it are copies that queries filter and sort by, with times canonical
 * (query.ts) so that they sort as instants.
 */
import { canonicalTime } from './query.js';
import {
  ArchiveError,
  type AttemptRecord,
  type EventRecord,
  type LogAppend,
  type RunRecord,
  type TokenCounts,
} from './types.js';

function invalid(what: string, why: string): ArchiveError {
  return new ArchiveError('archive_record_invalid', `${what}: ${why}`);
}

function requireText(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw invalid(what, 'must be a non-empty string');
  return value;
}

function requireCount(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(what, `must be a whole number ≥ 0, not ${String(value)}`);
  }
  return value;
}

/** The columns copy the record's own fields, with its usage flattened into three counts. */
export interface RunColumns
  extends
    Pick<
      RunRecord,
      | 'uid'
      | 'namespace'
      | 'name'
      | 'workflow'
      | 'issueId'
      | 'issueIdentifier'
      | 'phase'
      | 'createdAt'
    >,
    TokenCounts {
  reason: string | null;
  deletedAt: string | null;
  record: string;
}

export function runColumns(run: RunRecord): RunColumns {
  const uid = requireText(run.uid, 'run uid');
  const what = `run ${uid}`;
  const { deletedAt, ...rest } = run;
  return {
    uid,
    namespace: requireText(run.namespace, `${what} namespace`),
    name: requireText(run.name, `${what} name`),
    workflow: run.workflow ?? '',
    issueId: run.issueId ?? '',
    issueIdentifier: run.issueIdentifier ?? '',
    phase: run.phase ?? '',
    reason: run.reason ?? null,
    createdAt: canonicalTime(run.createdAt, `${what} createdAt`, 'archive_record_invalid'),
    deletedAt:
      deletedAt === undefined
        ? null
        : canonicalTime(deletedAt, `${what} deletedAt`, 'archive_record_invalid'),
    inputTokens: requireCount(run.usage?.inputTokens ?? 0, `${what} usage.inputTokens`),
    outputTokens: requireCount(run.usage?.outputTokens ?? 0, `${what} usage.outputTokens`),
    totalTokens: requireCount(run.usage?.totalTokens ?? 0, `${what} usage.totalTokens`),
    record: JSON.stringify(rest),
  };
}

/**
 * A run's row for an upsert, in the order both stores' INSERTs list the columns. `clean` passes
 * over the free-text columns copied from the spec (PostgreSQL's text cannot hold a NUL; SQLite
 * keeps them as they are).
 */
export function runRow(
  c: RunColumns,
  clean: (value: string) => string = (value) => value,
): Array<string | number | null> {
  return [
    c.uid,
    clean(c.namespace),
    clean(c.name),
    clean(c.workflow),
    clean(c.issueId),
    clean(c.issueIdentifier),
    clean(c.phase),
    c.reason === null ? null : clean(c.reason),
    c.createdAt,
    c.deletedAt,
    c.inputTokens,
    c.outputTokens,
    c.totalTokens,
    c.record,
  ];
}

/** A run back from its row: the deletion time is the column's (a later write without one keeps it). */
export function runFromRow(record: string, deletedAt: string | null): RunRecord {
  const run = JSON.parse(record) as RunRecord;
  if (deletedAt !== null) run.deletedAt = deletedAt;
  return run;
}

export interface AttemptColumns {
  runUid: string;
  slot: number;
  attempt: number;
  podUid: string;
  phase: string;
  record: string;
}

export function attemptColumns(attempt: AttemptRecord): AttemptColumns {
  const runUid = requireText(attempt.runUid, 'attempt runUid');
  const what = `attempt of run ${runUid}`;
  return {
    runUid,
    slot: requireCount(attempt.slot, `${what} slot`),
    attempt: requireCount(attempt.attempt, `${what} attempt`),
    podUid: attempt.podUid ?? '',
    phase: attempt.phase ?? '',
    record: JSON.stringify(attempt),
  };
}

export interface EventColumns {
  uid: string;
  runUid: string;
  firstTime: string | null;
  record: string;
}

export function eventColumns(event: EventRecord): EventColumns {
  const uid = requireText(event.uid, 'event uid');
  const first = event.firstTime ?? event.lastTime;
  return {
    uid,
    runUid: requireText(event.runUid, `event ${uid} runUid`),
    firstTime:
      first === undefined
        ? null
        : canonicalTime(first, `event ${uid} time`, 'archive_record_invalid'),
    record: JSON.stringify(event),
  };
}

/** Checks a log append and measures its piece in bytes (offsets count bytes, not chars). */
export function logAppendBytes(piece: LogAppend): number {
  const what = `log piece of Pod ${String(piece.podUid)}`;
  requireText(piece.podUid, 'log piece podUid');
  requireText(piece.runUid, `${what} runUid`);
  requireCount(piece.slot, `${what} slot`);
  requireCount(piece.attempt, `${what} attempt`);
  requireCount(piece.offset, `${what} offset`);
  if (requireCount(piece.capBytes, `${what} capBytes`) === 0)
    throw invalid(`${what} capBytes`, 'must be > 0');
  if (typeof piece.data !== 'string') throw invalid(`${what} data`, 'must be a string');
  return Buffer.byteLength(piece.data, 'utf8');
}
