import { ArchiveError, type ArchiveStore, type LogEntry } from './types.js';

/**
 * A store that forwards to the one `current()` returns, as it is when called: the controller's
 * read API serves the store its archiver opens in the background (and may not have opened yet:
 * then each call fails with archive_unavailable, never waits). Closing it closes nothing; the
 * owner of the real store closes that.
 */
export function delegatingArchive(
  current: () => ArchiveStore | undefined,
  location = 'the controller archive',
): ArchiveStore {
  const store = (): ArchiveStore => {
    const found = current();
    if (!found) throw new ArchiveError('archive_unavailable', `${location} is not open yet`);
    return found;
  };
  return {
    get kind() {
      return current()?.kind ?? 'sqlite';
    },
    get location() {
      return current()?.location ?? location;
    },
    migrate: async () => store().migrate(),
    putRun: async (run) => store().putRun(run),
    putAttempt: async (attempt) => store().putAttempt(attempt),
    putEvents: async (events) => store().putEvents(events),
    appendLog: async (piece) => store().appendLog(piece),
    listRuns: async (query) => store().listRuns(query),
    getRun: async (ref) => store().getRun(ref),
    readLog: (runUid, filter): AsyncIterable<LogEntry> => ({
      [Symbol.asyncIterator]: () => store().readLog(runUid, filter)[Symbol.asyncIterator](),
    }),
    usageByDay: async (query) => store().usageByDay(query),
    close: async () => undefined,
  };
}
