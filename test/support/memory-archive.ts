import {
  ArchiveError,
  type ArchiveStore,
  type ArchivedRun,
  type AttemptRecord,
  type EventRecord,
  type LogAppend,
  type LogEntry,
  type LogFilter,
  type LogPiece,
  type RunPage,
  type RunQuery,
  type RunRecord,
  type RunRef,
  type UsageQuery,
  type UsageRow,
} from '../../src/archive/types.js';

/**
 * An ArchiveStore in memory for the archiver's tests, kept to the interface's rules: every
 * write an upsert by its natural key, log pieces kept once by (podUid, offset), a Pod's log
 * held to its cap (pieces at offsets below capBytes/2 always kept, the oldest others dropped
 * while over it, readers shown where). `fail` makes every call throw (a store down, a disk
 * full) until it is cleared; `calls` counts the writes that reached it.
 */
export interface MemoryArchive extends ArchiveStore {
  /** Set: every call throws it; undefined: the store works. */
  fail: ArchiveError | undefined;
  readonly calls: Record<
    'putRun' | 'putAttempt' | 'putEvents' | 'appendLog' | 'markDeleted',
    number
  >;
  readonly runs: Map<string, RunRecord>;
  readonly attempts: Map<string, AttemptRecord>;
  readonly events: Map<string, EventRecord>;
  /** The Pod log pieces kept, by podUid then offset. */
  readonly logs: Map<string, Map<number, LogPiece & { runUid: string }>>;
  /** How many times a piece was offered at an offset already kept (or dropped). */
  readonly duplicatePieces: number;
  closed: boolean;
}

interface PodLog {
  pieces: Map<number, LogPiece & { runUid: string }>;
  /** Dropped by the cap: offset → bytes (never stored again). */
  dropped: Map<number, { bytes: number; slot: number; attempt: number }>;
}

const bytes = (text: string) => Buffer.byteLength(text);

export function createMemoryArchive(location = 'memory:test'): MemoryArchive {
  const runs = new Map<string, RunRecord>();
  const attempts = new Map<string, AttemptRecord>();
  const events = new Map<string, EventRecord>();
  const pods = new Map<string, PodLog>();
  const logs = new Map<string, Map<number, LogPiece & { runUid: string }>>();
  const calls = { putRun: 0, putAttempt: 0, putEvents: 0, appendLog: 0, markDeleted: 0 };
  let duplicatePieces = 0;
  const check = () => {
    if (store.fail) throw store.fail;
  };
  const clone = <T>(value: T): T => structuredClone(value);

  const store: MemoryArchive = {
    kind: 'sqlite',
    location,
    fail: undefined,
    calls,
    runs,
    attempts,
    events,
    logs,
    get duplicatePieces() {
      return duplicatePieces;
    },
    closed: false,
    async migrate() {
      check();
    },
    async putRun(run) {
      check();
      calls.putRun += 1;
      const deletedAt = run.deletedAt ?? runs.get(run.uid)?.deletedAt;
      runs.set(run.uid, clone({ ...run, ...(deletedAt ? { deletedAt } : {}) }));
    },
    async putAttempt(attempt) {
      check();
      calls.putAttempt += 1;
      attempts.set(`${attempt.runUid}/${attempt.slot}/${attempt.attempt}`, clone(attempt));
    },
    async putEvents(list) {
      check();
      calls.putEvents += 1;
      for (const event of list) events.set(event.uid, clone(event));
    },
    async appendLog(piece: LogAppend) {
      check();
      calls.appendLog += 1;
      let log = pods.get(piece.podUid);
      if (!log) {
        log = { pieces: new Map(), dropped: new Map() };
        pods.set(piece.podUid, log);
        logs.set(piece.podUid, log.pieces);
      }
      if (log.pieces.has(piece.offset) || log.dropped.has(piece.offset)) {
        duplicatePieces += 1;
        return;
      }
      const { capBytes, ...kept } = piece;
      log.pieces.set(piece.offset, kept);
      const total = () => [...log.pieces.values()].reduce((sum, p) => sum + bytes(p.data), 0);
      while (total() > capBytes) {
        const oldest = [...log.pieces.keys()]
          .filter((offset) => offset >= capBytes / 2)
          .sort((a, b) => a - b)[0];
        if (oldest === undefined) break;
        const gone = log.pieces.get(oldest);
        log.pieces.delete(oldest);
        if (gone) {
          log.dropped.set(oldest, {
            bytes: bytes(gone.data),
            slot: gone.slot,
            attempt: gone.attempt,
          });
        }
      }
    },
    async markDeleted(uid, at) {
      check();
      calls.markDeleted += 1;
      const run = runs.get(uid);
      if (run) run.deletedAt = at;
    },
    async listRuns(query: RunQuery): Promise<RunPage> {
      check();
      const matching = [...runs.values()]
        .filter(
          (run) =>
            (!query.namespaces || query.namespaces.includes(run.namespace)) &&
            (!query.workflow || run.workflow === query.workflow) &&
            (!query.issue || run.issueIdentifier === query.issue || run.issueId === query.issue) &&
            (!query.phase || run.phase === query.phase) &&
            (!query.reason || run.reason === query.reason) &&
            (!query.since || run.createdAt >= query.since) &&
            (!query.until || run.createdAt < query.until) &&
            (query.includeLive !== false || run.deletedAt !== undefined),
        )
        .sort((a, b) =>
          a.createdAt === b.createdAt
            ? a.uid < b.uid
              ? 1
              : -1
            : a.createdAt < b.createdAt
              ? 1
              : -1,
        );
      const limit = Math.min(query.limit ?? 100, 1000);
      const start = query.continue ? Number(query.continue) : 0;
      const page = matching.slice(start, start + limit).map(clone);
      return {
        runs: page,
        ...(start + limit < matching.length ? { continue: String(start + limit) } : {}),
      };
    },
    async getRun(ref: RunRef): Promise<ArchivedRun | undefined> {
      check();
      const run = ref.uid
        ? runs.get(ref.uid)
        : [...runs.values()]
            .filter((entry) => entry.namespace === ref.namespace && entry.name === ref.name)
            .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1))[0];
      if (!run) return undefined;
      return {
        run: clone(run),
        attempts: [...attempts.values()]
          .filter((attempt) => attempt.runUid === run.uid)
          .sort((a, b) => a.slot - b.slot || a.attempt - b.attempt)
          .map(clone),
        events: [...events.values()].filter((event) => event.runUid === run.uid).map(clone),
      };
    },
    async *readLog(runUid: string, filter: LogFilter = {}): AsyncIterable<LogEntry> {
      check();
      const entries: Array<LogEntry & { order: [number, number, number] }> = [];
      for (const [podUid, log] of pods) {
        for (const piece of log.pieces.values()) {
          if (piece.runUid !== runUid) continue;
          const { runUid: _runUid, ...rest } = piece;
          entries.push({
            kind: 'data',
            piece: rest,
            order: [piece.slot, piece.attempt, piece.offset],
          });
        }
        const own = [...log.pieces.values()].some((piece) => piece.runUid === runUid);
        if (!own) continue;
        for (const [offset, gone] of log.dropped) {
          entries.push({
            kind: 'elided',
            podUid,
            slot: gone.slot,
            attempt: gone.attempt,
            offset,
            bytes: gone.bytes,
            order: [gone.slot, gone.attempt, offset],
          });
        }
      }
      entries.sort(
        (a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1] || a.order[2] - b.order[2],
      );
      for (const { order: _order, ...entry } of entries) {
        const where = entry.kind === 'data' ? entry.piece : entry;
        if (filter.slot !== undefined && where.slot !== filter.slot) continue;
        if (filter.attempt !== undefined && where.attempt !== filter.attempt) continue;
        yield clone<LogEntry>(entry);
      }
    },
    async usageByDay(query: UsageQuery): Promise<UsageRow[]> {
      check();
      const rows = new Map<string, UsageRow>();
      for (const run of runs.values()) {
        if (query.namespaces && !query.namespaces.includes(run.namespace)) continue;
        if (query.workflow && run.workflow !== query.workflow) continue;
        const day = run.createdAt.slice(0, 10);
        if ((query.from && day < query.from) || (query.to && day > query.to)) continue;
        const key = `${run.namespace}/${run.workflow}/${day}`;
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
      return [...rows.values()];
    },
    async close() {
      store.closed = true;
    },
  };
  return store;
}

/** The whole archived log of a run as text (markers where pieces were dropped). */
export async function archivedLogText(store: ArchiveStore, runUid: string): Promise<string> {
  let text = '';
  for await (const entry of store.readLog(runUid)) {
    text += entry.kind === 'data' ? entry.piece.data : `[${entry.bytes} bytes elided]\n`;
  }
  return text;
}

/**
 * Any store with a switch for faults: while `fail` is set every call throws it (a database
 * down, a disk full). close() leaves the inner store open, so that a test can restart the
 * controller on the same store; the test closes the inner one itself.
 */
export interface FaultyArchive extends ArchiveStore {
  fail: ArchiveError | undefined;
  readonly inner: ArchiveStore;
}

export function faultyArchive(inner: ArchiveStore): FaultyArchive {
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (faulty.fail) throw faulty.fail;
      return call(...args);
    };
  const faulty: FaultyArchive = {
    inner,
    fail: undefined,
    kind: inner.kind,
    location: inner.location,
    migrate: guard(() => inner.migrate()),
    putRun: guard((run) => inner.putRun(run)),
    putAttempt: guard((attempt) => inner.putAttempt(attempt)),
    putEvents: guard((events) => inner.putEvents(events)),
    appendLog: guard((piece) => inner.appendLog(piece)),
    markDeleted: guard((uid, at) => inner.markDeleted(uid, at)),
    listRuns: guard((query) => inner.listRuns(query)),
    getRun: guard((ref) => inner.getRun(ref)),
    async *readLog(runUid, filter) {
      if (faulty.fail) throw faulty.fail;
      yield* inner.readLog(runUid, filter);
    },
    usageByDay: guard((query) => inner.usageByDay(query)),
    async close() {},
  };
  return faulty;
}
