import { join } from 'node:path';
import { asConfigError, waitOnConfigError } from './pod-report.js';
import { filesContext, logFor, MAX_BACKOFF_MS, metaKey, type PodRun } from './pod-run.js';
import { describeError } from './types.js';
import { materializeVolumes, refreshDownwardVolumes, type VolumeHosts } from './volumes.js';

// A Pod's volumes over its life: made once before any container starts (retried while an
// object they need is missing), and downward-API files rewritten when labels or annotations
// change. How each volume type is made is in volumes.ts and volume-files.ts.

/**
 * Makes every volume, retrying with back-off (1 s doubling to 10 s) while a ConfigMap,
 * Secret or claim is missing, with all containers shown waiting on the error meanwhile.
 * Undefined when the Pod was stopped first: then no container may start.
 */
export async function prepareVolumes(run: PodRun): Promise<VolumeHosts | undefined> {
  for (let delay = 1000; !run.stop; delay = Math.min(delay * 2, MAX_BACKOFF_MS)) {
    try {
      return await materializeVolumes(filesContext(run), run.podDir, join(run.deps.dataDir, 'pvs'));
    } catch (err) {
      logFor(run, `volumes: ${describeError(err)}`);
      await waitOnConfigError(
        run,
        [...run.model.initContainers, ...run.model.containers],
        asConfigError(err),
        delay,
      );
    }
  }
  return undefined;
}

/**
 * Rewrites the downward volumes when the newest Pod's labels or annotations differ from the
 * ones last written. Before the volumes exist there is nothing to rewrite, and the change
 * stays pending: the run calls this again once they do.
 */
export function refreshDownwardIfChanged(run: PodRun): void {
  const meta = metaKey(run.current);
  if (meta === run.lastMeta || !run.hosts) return;
  run.lastMeta = meta;
  // Chained, so two quick changes never write the same files at once.
  run.refreshing = run.refreshing
    .then(() => refreshDownwardVolumes(filesContext(run), run.podDir))
    .catch((err) => logFor(run, `downward API refresh: ${describeError(err)}`));
}
