// An in-memory ArchiveStore for the readers' tests (the read API, `lorenz get runs`, `lorenz
// logs`, `lorenz describe run`): it keeps the contract of src/archive/types.ts (upserts by
// natural key, newest-first paging, head-and-tail log caps with an elided marker) so that the
// same tests run unchanged against the SQLite and PostgreSQL stores.
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
} from '../../src/archive/types.js';

interface StoredLog {
  runUid: string;
  podUid: string;
  slot: number;
  attempt: number;
  capBytes: number;
  pieces: Map<number, string>;
}

const byteLength = (text: string): number => Buffer.byteLength(text, 'utf8');

function encodeContinue(run: RunRecord): string {
  return Buffer.from(JSON.stringify([run.createdAt, run.uid])).toString('base64url');
}

function decodeContinue(token: string): [string, string] {
  try {
    const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string'
    )
      return [value[0], value[1]];
  } catch {
    // falls through to the error below
  }
  throw new ArchiveError('archive_query_invalid', `continue: not a token of this archive`);
}

/** Newest first: createdAt, then uid, both descending. */
const newestFirst = (a: RunRecord, b: RunRecord): number =>
  a.createdAt === b.createdAt ? b.uid.localeCompare(a.uid) : b.createdAt.localeCompare(a.createdAt);

export function createMemoryArchive(): ArchiveStore {
  const runs = new Map<string, RunRecord>();
  const attempts = new Map<string, AttemptRecord>();
  const events = new Map<string, EventRecord>();
  const logs = new Map<string, StoredLog>();

  function matches(run: RunRecord, query: RunQuery): boolean {
    if (query.namespaces && !query.namespaces.includes(run.namespace)) return false;
    if (query.workflow !== undefined && run.workflow !== query.workflow) return false;
    if (
      query.issue !== undefined &&
      run.issueIdentifier !== query.issue &&
      run.issueId !== query.issue
    )
      return false;
    if (query.phase !== undefined && run.phase !== query.phase) return false;
    if (query.reason !== undefined && run.reason !== query.reason) return false;
    if (query.since !== undefined && run.createdAt < query.since) return false;
    if (query.until !== undefined && run.createdAt >= query.until) return false;
    if (query.includeLive === false && run.deletedAt === undefined) return false;
    return true;
  }

  function* entriesOf(log: StoredLog): Generator<LogEntry> {
    const offsets = [...log.pieces.keys()].sort((a, b) => a - b);
    const sizes = offsets.map((offset) => byteLength(log.pieces.get(offset) ?? ''));
    const total = sizes.reduce((sum, size) => sum + size, 0);
    const keep = new Set<number>();
    if (total <= log.capBytes) offsets.forEach((_, index) => keep.add(index));
    else {
      // The head: pieces wholly inside the first half; the tail: the newest pieces that fit.
      let head = 0;
      for (let index = 0; index < offsets.length; index += 1) {
        const size = sizes[index] ?? 0;
        if (head + size > log.capBytes / 2) break;
        head += size;
        keep.add(index);
      }
      let tail = 0;
      for (let index = offsets.length - 1; index >= 0 && !keep.has(index); index -= 1) {
        const size = sizes[index] ?? 0;
        if (tail + size > log.capBytes / 2) break;
        tail += size;
        keep.add(index);
      }
    }
    let dropped: { offset: number; bytes: number } | undefined;
    for (let index = 0; index < offsets.length; index += 1) {
      const offset = offsets[index] ?? 0;
      if (!keep.has(index)) {
        dropped ??= { offset, bytes: 0 };
        dropped.bytes += sizes[index] ?? 0;
        continue;
      }
      const base = { podUid: log.podUid, slot: log.slot, attempt: log.attempt };
      if (dropped) yield { kind: 'elided', ...base, ...dropped };
      dropped = undefined;
      yield { kind: 'data', piece: { ...base, offset, data: log.pieces.get(offset) ?? '' } };
    }
  }

  return {
    kind: 'sqlite',
    location: 'memory (tests)',
    async migrate() {},
    async putRun(run) {
      const deletedAt = runs.get(run.uid)?.deletedAt;
      runs.set(run.uid, structuredClone({ ...(deletedAt ? { deletedAt } : {}), ...run }));
    },
    async putAttempt(attempt) {
      attempts.set(
        `${attempt.runUid}/${attempt.slot}/${attempt.attempt}`,
        structuredClone(attempt),
      );
    },
    async putEvents(list) {
      for (const event of list) events.set(event.uid, structuredClone(event));
    },
    async appendLog(piece: LogAppend) {
      const log = logs.get(piece.podUid) ?? {
        runUid: piece.runUid,
        podUid: piece.podUid,
        slot: piece.slot,
        attempt: piece.attempt,
        capBytes: piece.capBytes,
        pieces: new Map<number, string>(),
      };
      log.capBytes = piece.capBytes;
      log.pieces.set(piece.offset, piece.data);
      logs.set(piece.podUid, log);
    },
    async markDeleted(uid, at) {
      const run = runs.get(uid);
      if (run) run.deletedAt = at;
    },
    async listRuns(query: RunQuery): Promise<RunPage> {
      const limit = query.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new ArchiveError('archive_query_invalid', `limit: want 1 to 1000, got ${limit}`);
      const after = query.continue === undefined ? undefined : decodeContinue(query.continue);
      const sorted = [...runs.values()]
        .filter((run) => matches(run, query))
        .sort(newestFirst)
        .filter(
          (run) =>
            !after ||
            run.createdAt < after[0] ||
            (run.createdAt === after[0] && run.uid.localeCompare(after[1]) < 0),
        );
      const page = sorted.slice(0, limit).map((run) => structuredClone(run));
      const last = page.at(-1);
      return sorted.length > limit && last
        ? { runs: page, continue: encodeContinue(last) }
        : { runs: page };
    },
    async getRun(ref: RunRef): Promise<ArchivedRun | undefined> {
      const run = ref.uid
        ? runs.get(ref.uid)
        : [...runs.values()]
            .filter((each) => each.namespace === ref.namespace && each.name === ref.name)
            .sort(newestFirst)[0];
      if (!run || (ref.uid && ref.namespace && run.namespace !== ref.namespace)) return undefined;
      return structuredClone({
        run,
        attempts: [...attempts.values()]
          .filter((attempt) => attempt.runUid === run.uid)
          .sort((a, b) => a.slot - b.slot || a.attempt - b.attempt),
        events: [...events.values()]
          .filter((event) => event.runUid === run.uid)
          .sort((a, b) => (a.firstTime ?? '').localeCompare(b.firstTime ?? '')),
      });
    },
    async *readLog(runUid: string, filter: LogFilter = {}): AsyncIterable<LogEntry> {
      const selected = [...logs.values()]
        .filter((log) => log.runUid === runUid)
        .filter((log) => filter.slot === undefined || log.slot === filter.slot)
        .filter((log) => filter.attempt === undefined || log.attempt === filter.attempt)
        .sort((a, b) => a.slot - b.slot || a.attempt - b.attempt);
      for (const log of selected) yield* entriesOf(log);
    },
    async usageByDay(query: UsageQuery): Promise<UsageRow[]> {
      const rows = new Map<string, UsageRow>();
      for (const run of runs.values()) {
        if (query.namespaces && !query.namespaces.includes(run.namespace)) continue;
        if (query.workflow !== undefined && run.workflow !== query.workflow) continue;
        const day = run.createdAt.slice(0, 10);
        if ((query.from && day < query.from) || (query.to && day > query.to)) continue;
        const key = `${run.namespace}\u0000${run.workflow}\u0000${day}`;
        const row = rows.get(key) ?? {
          namespace: run.namespace,
          workflow: run.workflow,
          day,
          runs: 0,
          failed: 0,
          inputTokens: 0,
          outputTokens: 0,
          totalTokens: 0,
        };
        row.runs += 1;
        if (run.phase === 'Failed') row.failed += 1;
        row.inputTokens += run.usage.inputTokens;
        row.outputTokens += run.usage.outputTokens;
        row.totalTokens += run.usage.totalTokens;
        rows.set(key, row);
      }
      return [...rows.values()].sort(
        (a, b) =>
          a.day.localeCompare(b.day) ||
          a.namespace.localeCompare(b.namespace) ||
          a.workflow.localeCompare(b.workflow),
      );
    },
    async close() {},
  };
}
