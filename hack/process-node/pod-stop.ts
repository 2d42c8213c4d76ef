import { logFor, type PodRun, type Stop } from './pod-run.js';
import { describeError, httpStatus } from './types.js';

// Ending a Pod's containers and, after a graceful deletion, its API object: as the kubelet
// does, SIGTERM first, SIGKILL when the grace period is over, and the object deleted only
// once the final status is sent.

function killAll(run: PodRun, sig: NodeJS.Signals): void {
  for (const proc of run.running.values()) proc.signal(sig);
}

/** SIGTERM now, SIGKILL after the grace period; a later, shorter grace wins. */
export function beginStop(run: PodRun, next: Stop, graceSeconds: number): void {
  if (!run.stop) {
    if (!run.silent) logFor(run, `stopping (${next.reason ?? 'deleted'}, grace ${graceSeconds}s)`);
    run.stop = next;
    killAll(run, 'SIGTERM');
    // Ends every back-off and retry wait, so the run moves on to its final status.
    run.wake();
  } else if (next.deleting) run.stop.deleting = true;
  const at = Date.now() + graceSeconds * 1000;
  if (at >= run.killAt) return;
  run.killAt = at;
  clearTimeout(run.killTimer);
  run.killTimer = setTimeout(() => killAll(run, 'SIGKILL'), Math.max(0, at - Date.now()));
}

/**
 * activeDeadlineSeconds counts from the Pod's startTime; past it the containers are stopped
 * with the Pod's own grace period and the Pod fails. Returns the timer to clear at the end.
 */
export function startDeadline(run: PodRun): NodeJS.Timeout | undefined {
  const deadline = run.spec.activeDeadlineSeconds;
  if (deadline === undefined) return undefined;
  return setTimeout(
    () =>
      beginStop(
        run,
        {
          reason: 'DeadlineExceeded',
          message: 'Pod was active on the node longer than the specified deadline',
          deleting: false,
        },
        run.spec.terminationGracePeriodSeconds ?? 30,
      ),
    Math.max(0, Date.parse(run.model.startTime) + deadline * 1000 - Date.now()),
  );
}

/**
 * Deletes the Pod object with grace 0, as the kubelet does once a deleted Pod's containers
 * are down. The UID precondition keeps it from deleting a new Pod of the same name.
 */
export async function deletePodObject(run: PodRun): Promise<void> {
  logFor(run, 'terminated; deleting the Pod object');
  try {
    // With a body the apiserver reads the options from it alone, not from the query.
    await run.deps.core.deleteNamespacedPod({
      namespace: run.namespace,
      name: run.name,
      body: { gracePeriodSeconds: 0, preconditions: { uid: run.uid } },
    });
  } catch (err) {
    const code = httpStatus(err);
    if (code !== 404) logFor(run, `delete: ${code} ${describeError(err)}`);
  }
}
