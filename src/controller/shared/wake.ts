import type { IssueRun } from '../../api/index.js';
import { objectKey } from '../runtime/informer.js';

/**
 * Where a webhook delivery says "look now" (docs/webhooks.md). A delivery carries no state
 * the controller trusts: it only names what to look at again, and whoever subscribed reads
 * the state back from the tracker or the code host. Polling stays the fallback, so a wake
 * that is lost costs one interval, never an issue.
 */
export type WakeTarget =
  /** Poll this Workflow's tracker now. */
  | { kind: 'poll'; namespace: string; workflow: string }
  /** Read back the pull requests of this Workflow's runs now (on this branch, when known). */
  | { kind: 'review'; namespace: string; workflow: string; branch?: string };

export type WakeListener = (target: WakeTarget) => void;

export interface WakeBoard {
  /** Tells every listener of the target's kind; never throws (a listener's error is dropped). */
  wake(target: WakeTarget): void;
  /** Listens for one kind of wake; returns the function that stops listening. */
  subscribe(kind: WakeTarget['kind'], listener: WakeListener): () => void;
}

/** The keys of the target Workflow's runs that `wanted` picks: the ones a wake is for. */
export function runsOfWake(
  runs: readonly IssueRun[],
  target: WakeTarget,
  wanted: (run: IssueRun) => boolean,
): string[] {
  return runs
    .filter(
      (run) =>
        run.metadata.namespace === target.namespace &&
        run.spec.workflowRef.name === target.workflow &&
        wanted(run),
    )
    .map(objectKey);
}

export function createWakeBoard(): WakeBoard {
  const listeners = new Map<WakeTarget['kind'], Set<WakeListener>>();
  return {
    wake(target) {
      for (const listener of listeners.get(target.kind) ?? []) {
        try {
          listener(target);
        } catch {
          // A wake only hurries a look that polling makes anyway.
        }
      }
    },
    subscribe(kind, listener) {
      const set = listeners.get(kind) ?? new Set<WakeListener>();
      listeners.set(kind, set);
      set.add(listener);
      return () => set.delete(listener);
    },
  };
}
