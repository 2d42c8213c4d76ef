import { logKey } from './log-registry.js';
import { buildPodStatus, type ContainerRecord } from './pod-status.js';
import { pause, type PodRun } from './pod-run.js';
import { describeError, PodConfigError } from './types.js';

// What the worker tells the API about a Pod: its status, a container it cannot start yet,
// and the phase the Pod ends in. The status itself is built in pod-status.ts and sent by
// status-reporter.ts; this file decides when and with what.

/** Sends the model as the Pod's status (coalesced), unless the Pod is gone or the node stops. */
export function publish(run: PodRun): void {
  if (!run.silent) run.reporter.set(buildPodStatus(run.model));
}

/** Anything that stops a container from being created is reported as a config error. */
export const asConfigError = (err: unknown): PodConfigError =>
  err instanceof PodConfigError
    ? err
    : new PodConfigError('CreateContainerConfigError', describeError(err), true);

/**
 * Shows the containers as waiting on the error (in the status and to `kubectl logs`), then
 * waits: `delay` before the caller retries an error that may heal (a missing object), or
 * until the Pod is stopped for one that cannot (a bad spec).
 */
export async function waitOnConfigError(
  run: PodRun,
  records: ContainerRecord[],
  err: PodConfigError,
  delay: number,
): Promise<void> {
  for (const r of records) r.state = { waiting: { reason: err.reason, message: err.message } };
  for (const r of records) {
    run.deps.logs.set(logKey(run.namespace, run.name, r.name), {
      attempts: [],
      running: false,
      waiting: err.reason,
    });
  }
  publish(run);
  if (err.retryable) await pause(run, delay);
  else await run.stopped;
}

const isTerminated = (r: ContainerRecord) => 'terminated' in r.state;

/**
 * The phase once no container runs any more. A stop with a reason (the deadline) fails the
 * Pod whatever its containers did; a plain deletion leaves the phase as the containers made it.
 */
export function settleFinalPhase(run: PodRun, initFailed: boolean): void {
  const { model, stop } = run;
  if (stop?.reason) {
    model.phase = 'Failed';
    model.reason = stop.reason;
    model.message = stop.message;
  } else if (initFailed) model.phase = 'Failed';
  else if (model.containers.every(isTerminated)) {
    const allOk = model.containers.every(
      (r) => 'terminated' in r.state && r.state.terminated.exitCode === 0,
    );
    model.phase = allOk ? 'Succeeded' : 'Failed';
  }
}
