import { runContainer } from './container-restarts.js';
import { publish, settleFinalPhase } from './pod-report.js';
import { hasInitContainers, type PodRun } from './pod-run.js';
import { newRecord } from './pod-status.js';
import { deletePodObject, startDeadline } from './pod-stop.js';
import { prepareVolumes, refreshDownwardIfChanged } from './pod-volume-setup.js';

// The order in which a Pod runs on this node, as the kubelet's: volumes, then init containers
// one by one, then all containers together, then the final status and, for a deleted Pod,
// the deletion of its object. Each step is in its own file; this one only sequences them.

/** After the volumes exist, containers that were waiting on a config error wait normally. */
function clearConfigErrors(run: PodRun): void {
  const reason = hasInitContainers(run) ? 'PodInitializing' : 'ContainerCreating';
  for (const r of [...run.model.initContainers, ...run.model.containers]) {
    if ('waiting' in r.state) r.state = { waiting: { reason } };
  }
}

/**
 * Init containers in order, each to success before the next. True when one failed for good
 * (not when the Pod was stopped meanwhile: a stop decides the phase by itself).
 */
async function runInitContainers(run: PodRun): Promise<boolean> {
  for (const [i, container] of (run.spec.initContainers ?? []).entries()) {
    const record = run.model.initContainers[i];
    if (!record || (await runContainer(run, container, record, true)) !== 'ok') return !run.stop;
  }
  return false;
}

/** All main containers at once; each restarts by itself under the Pod's restartPolicy. */
async function runMainContainers(run: PodRun): Promise<void> {
  const { spec, model } = run;
  for (const r of model.containers) r.state = { waiting: { reason: 'ContainerCreating' } };
  await Promise.all(
    spec.containers.map((c, i) =>
      runContainer(run, c, model.containers[i] ?? newRecord(c.name, c.image, ''), false),
    ),
  );
}

/** Runs the Pod to its end: its final status sent and, if it was deleted, its object removed. */
export async function runPod(run: PodRun): Promise<void> {
  publish(run);
  const deadlineTimer = startDeadline(run);
  let initFailed = false;
  run.hosts = await prepareVolumes(run);
  // Labels or annotations that changed while the volumes were being made.
  refreshDownwardIfChanged(run);
  if (run.hosts) {
    clearConfigErrors(run);
    initFailed = await runInitContainers(run);
    if (!initFailed && !run.stop) await runMainContainers(run);
  }
  clearTimeout(deadlineTimer);
  clearTimeout(run.killTimer);
  settleFinalPhase(run, initFailed);
  publish(run);
  await run.reporter.flush();
  // A refresh that ended after the Pod's directory is removed would recreate it.
  await run.refreshing;
  run.finished = true;
  if (run.stop?.deleting && !run.silent) await deletePodObject(run);
}
