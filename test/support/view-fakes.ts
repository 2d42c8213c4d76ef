// Stand-ins for what `lorenz server` reads, for its unit tests and bench:server: a watch
// cache that holds fixed run summaries, and an access control that lets the caller do
// everything (local mode). The server itself is real; only its inputs are held still.
import type { AccessControl, CallerAccess } from '../../src/server/access.js';
import type { ViewCache } from '../../src/server/cache.js';
import type { ChangeEvent, RunSummary } from '../../src/server/view-api.js';

type Change = Exclude<ChangeEvent, { event: 'heartbeat' }>;

/**
 * A cache of these runs, which must be newest first as the real cache keeps them; changes
 * reach whoever `subscribe`s only through `listeners`, when given.
 */
export function fixedViewCache(
  runs: readonly RunSummary[],
  listeners?: Set<(change: Change) => void>,
): ViewCache {
  const uids = new Set(runs.map((run) => run.uid));
  return {
    hasSynced: () => true,
    waitForSync: async () => {},
    runs: () => runs,
    run: () => undefined,
    isLive: (uid) => uids.has(uid),
    workflows: () => [],
    workflow: () => undefined,
    subscribe(listener) {
      if (!listeners) return () => {};
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start() {},
    stop: async () => {},
  };
}

/** Local mode, a caller that may read everything and write nothing. */
export function readAllAccess(username = 'bench'): AccessControl {
  const yes = async () => true;
  const caller: CallerAccess = {
    caller: { username, groups: [] },
    token: undefined,
    may: yes,
    mayReadRuns: yes,
    mayReadWorkflows: yes,
    writer: () => {
      throw new Error('this caller makes no writes');
    },
  };
  return { mode: 'local', forRequest: async () => caller };
}
