import type { IssueRun, Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { PVCS, resourcePath, statusOf } from '../runtime/client.js';
import { LABEL_WARM_OF } from '../shared/constants.js';
import { labelValue } from '../shared/object-names.js';
import { VOLUME_SNAPSHOTS } from '../shared/snapshot-support.js';
import type { VolumeSnapshotObject } from './children.js';
import { planWarmGc, type ClaimView } from './gc.js';
import { deleteWarmSnapshot } from './objects.js';

interface Owned {
  metadata?: { name?: string; ownerReferences?: { uid?: string; controller?: boolean }[] };
}
interface ClaimObject {
  spec?: { dataSource?: ClaimView['dataSource'] };
  status?: { phase?: string };
}

/** What a garbage collection pass left: warm snapshots still there, and whether any is held. */
export interface CollectResult {
  remaining: number;
  held: boolean;
}

/**
 * Deletes the Workflow's warm snapshots that no run needs any more (gc.ts decides which).
 * The snapshots are listed by the warm-of label and kept to the Workflow's own (its uid as
 * their controller); the claims are listed only when some snapshot could go. A cluster that
 * does not serve snapshots (404) or forbids listing them (403) has none to collect.
 */
export async function collectWarmSnapshots(options: {
  client: KubeClient;
  workflow: Workflow;
  current: string | undefined;
  currentReadyAt: number | undefined;
  building: string | undefined;
  runs: readonly IssueRun[];
  now: number;
  graceMs?: number | undefined;
}): Promise<CollectResult> {
  const { client, workflow } = options;
  const namespace = workflow.metadata.namespace ?? '';
  let snapshots: (VolumeSnapshotObject & Owned)[];
  try {
    const listed = await client.request<{ items?: (VolumeSnapshotObject & Owned)[] }>({
      path: resourcePath(VOLUME_SNAPSHOTS, namespace),
      query: { labelSelector: `${LABEL_WARM_OF}=${labelValue(workflow.metadata.name ?? '')}` },
    });
    snapshots = listed.items ?? [];
  } catch (error) {
    const status = statusOf(error);
    if (status === 404 || status === 403) return { remaining: 0, held: false };
    throw error;
  }
  const names = snapshots
    .filter((item) =>
      (item.metadata?.ownerReferences ?? []).some(
        (owner) => owner.controller === true && owner.uid === workflow.metadata.uid,
      ),
    )
    .map((item) => item.metadata?.name ?? '');
  const candidates = names.filter((name) => name !== options.current && name !== options.building);
  const claims: ClaimView[] =
    candidates.length === 0
      ? []
      : (
          (await client.request<{ items?: ClaimObject[] }>({ path: resourcePath(PVCS, namespace) }))
            .items ?? []
        ).map((claim) => ({
          phase: claim.status?.phase,
          dataSource: claim.spec?.dataSource,
        }));
  const plan = planWarmGc({
    snapshots: names,
    current: options.current,
    currentReadyAt: options.currentReadyAt,
    building: options.building,
    runs: options.runs,
    claims,
    now: options.now,
    graceMs: options.graceMs,
  });
  await Promise.all(plan.delete.map((name) => deleteWarmSnapshot(client, namespace, name)));
  return { remaining: names.length - plan.delete.length, held: plan.held.length > 0 };
}
