import type { Issue } from '../workflow/issue.js';
import type { TrackerAdapter } from './types.js';

const stateKey = (state: string | null): string => (state ?? '').trim().toLowerCase();

/**
 * The `memory` tracker: the issues listed in WORKFLOW.md's `tracker.issues`. Changing the
 * Workflow changes the board, so a demo or a test can move an issue through its states with
 * `kubectl apply` and no outside service.
 */
export function createMemoryTracker(
  issues: readonly Issue[],
  states: { activeStates: readonly string[] },
): TrackerAdapter {
  const inStates = (wanted: readonly string[]) => {
    const keys = new Set(wanted.map(stateKey));
    return issues.filter((issue) => keys.has(stateKey(issue.state)));
  };
  return {
    kind: 'memory',
    fetchCandidates: () => Promise.resolve(inStates(states.activeStates)),
    fetchByIds(ids) {
      const wanted = new Set(ids);
      return Promise.resolve(
        issues.filter((issue) => wanted.has(issue.id ?? '') || wanted.has(issue.identifier)),
      );
    },
    fetchByStates: (wanted) => Promise.resolve(inStates(wanted)),
  };
}
