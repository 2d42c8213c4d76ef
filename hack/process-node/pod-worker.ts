import { rm } from 'node:fs/promises';
import type { V1Pod } from '@kubernetes/client-node';
import { logKey } from './log-registry.js';
import { runPod } from './pod-lifecycle.js';
import { logFor, newPodRun, type PodRun, type WorkerDeps } from './pod-run.js';
import { beginStop, deletePodObject } from './pod-stop.js';
import { refreshDownwardIfChanged } from './pod-volume-setup.js';
import { describeError } from './types.js';

export type { WorkerDeps } from './pod-run.js';

// The handle pod-watcher.ts keeps per Pod: it turns watch events into what the running Pod
// must do (refresh volumes, stop, be forgotten). The run itself is in pod-lifecycle.ts.

export interface PodWorker {
  /** A newer version of the Pod from the watch (labels, annotations, deletion). */
  update(pod: V1Pod): void;
  /** The Pod object is gone from the API: kill at once, write nothing. */
  vanished(): void;
  /** The node is stopping: kill at once, write nothing, wait for the end. */
  shutdown(): Promise<void>;
  done: Promise<void>;
}

/**
 * A deletionTimestamp: stop the containers within the Pod's grace period; the run deletes
 * the object once they are down. A Pod that already finished only needs its object deleted.
 */
function onDeletion(run: PodRun, pod: V1Pod): void {
  if (run.finished) {
    if (!run.stop?.deleting) {
      run.stop = { ...(run.stop ?? {}), deleting: true };
      void deletePodObject(run);
    }
    return;
  }
  beginStop(
    run,
    { deleting: true },
    pod.metadata?.deletionGracePeriodSeconds ?? run.spec.terminationGracePeriodSeconds ?? 30,
  );
}

/** What the node keeps of a Pod outside the API: its log entries and its directory. */
async function removeLocalState(run: PodRun, done: Promise<void>): Promise<void> {
  await done;
  for (const c of [...(run.spec.initContainers ?? []), ...run.spec.containers])
    run.deps.logs.delete(logKey(run.namespace, run.name, c.name));
  await rm(run.podDir, { recursive: true, force: true });
}

/** Runs one Pod bound to this node, from volumes to its final status and deletion. */
export function startPodWorker(deps: WorkerDeps, initial: V1Pod): PodWorker {
  const run = newPodRun(deps, initial);
  const done = runPod(run).catch((err) => logFor(run, `worker failed: ${describeError(err)}`));

  return {
    update(pod) {
      run.current = pod;
      if (pod.metadata?.deletionTimestamp) onDeletion(run, pod);
      else refreshDownwardIfChanged(run);
    },
    vanished() {
      // Nothing to report to: the object is gone. Kill without grace and forget the Pod.
      run.silent = true;
      beginStop(run, { deleting: false }, 0);
      void removeLocalState(run, done);
    },
    async shutdown() {
      // The node is going away: its container processes must not outlive it.
      run.silent = true;
      beginStop(run, { deleting: false }, 0);
      await done;
    },
    done,
  };
}
