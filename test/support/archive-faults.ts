// Test support for the run archive over the real stores (SQLite, PostgreSQL): a switch for
// faults (a database down, a disk full) and counters of what a writer asked of the store.
import type { ArchiveError, ArchiveStore } from '../../src/archive/types.js';

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
  /** How many times each write was called (whether it failed or not). */
  readonly calls: Record<'putRun' | 'putAttempt' | 'putEvents' | 'appendLog', number>;
  /** appendLog calls at a (pod, offset) asked for before: a writer that repeats itself. */
  readonly repeatedPieces: number;
}

export function faultyArchive(inner: ArchiveStore): FaultyArchive {
  const guard =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (faulty.fail) throw faulty.fail;
      return call(...args);
    };
  const calls = { putRun: 0, putAttempt: 0, putEvents: 0, appendLog: 0 };
  const offered = new Set<string>();
  let repeatedPieces = 0;
  const counted =
    <A extends unknown[], R>(name: keyof typeof calls, call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      calls[name] += 1;
      return call(...args);
    };
  const faulty: FaultyArchive = {
    inner,
    fail: undefined,
    calls,
    get repeatedPieces() {
      return repeatedPieces;
    },
    kind: inner.kind,
    location: inner.location,
    migrate: guard(() => inner.migrate()),
    putRun: counted(
      'putRun',
      guard((run) => inner.putRun(run)),
    ),
    putAttempt: counted(
      'putAttempt',
      guard((attempt) => inner.putAttempt(attempt)),
    ),
    putEvents: counted(
      'putEvents',
      guard((events) => inner.putEvents(events)),
    ),
    appendLog: counted(
      'appendLog',
      guard((piece) => {
        const key = `${piece.podUid}@${piece.offset}`;
        if (offered.has(key)) repeatedPieces += 1;
        offered.add(key);
        return inner.appendLog(piece);
      }),
    ),
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
