import { SNAPSHOT_API_GROUP, SNAPSHOT_API_VERSION, type Workflow } from '../../api/index.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import type { KubeClient, ResourceRef } from '../runtime/client.js';
import { STORAGECLASSES, resourcePath, statusOf } from '../runtime/client.js';

/**
 * What a cluster and a Workflow must have for a workspace to be snapshotted or restored: the
 * snapshot API, a VolumeSnapshotClass for the claim's StorageClass driver, a claim at all, no
 * SSH workers and per-agent isolation. Asked by the runs' snapshot sources
 * (issuerun/snapshot-source.ts) and by the warm controller (warm/), which must not warm what
 * no run could start from.
 */
export const VOLUME_SNAPSHOTS: ResourceRef = {
  group: SNAPSHOT_API_GROUP,
  version: SNAPSHOT_API_VERSION,
  plural: 'volumesnapshots',
};
export const VOLUME_SNAPSHOT_CLASSES: ResourceRef = {
  group: SNAPSHOT_API_GROUP,
  version: SNAPSHOT_API_VERSION,
  plural: 'volumesnapshotclasses',
};
const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';
/** The external-snapshotter's mark of the class to use for a driver when none is named. */
const DEFAULT_SNAPSHOT_CLASS_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';

/**
 * Why no snapshot can serve this Workflow's workspace, whatever the cluster has, or null:
 * shared by the runs' sources and the warm controller (which must not warm what no run could
 * start from).
 */
export function snapshotsUnsupportedWhy(workflow: Workflow, config: WorkflowConfig): string | null {
  if (!workflow.spec.workspace?.volumeClaimTemplate) {
    return `Workflow ${workflow.metadata.name} has no spec.workspace.volumeClaimTemplate: only a claim can be restored from a snapshot`;
  }
  if (config.worker.sshHosts.length > 0) {
    return 'the workflow runs on SSH workers (worker.ssh_hosts): the restored tree is on the volume, not on the host';
  }
  if (config.workspace.isolation === 'none') {
    return "workspace.isolation is none: a snapshot restores one issue's workspace, not a shared root";
  }
  return null;
}

interface StorageClassObject {
  metadata?: { name?: string; annotations?: Record<string, string> };
  provisioner?: string;
}
interface SnapshotClassObject {
  metadata?: { name?: string; annotations?: Record<string, string> };
  driver?: string;
}

/**
 * The VolumeSnapshotClass for the claim's StorageClass (the named one, else the cluster's
 * default): one of those serving its driver, the driver's default class first, else the
 * first by name. `unknown`: not ours to know (a 403, or the StorageClass is missing, which
 * the StorageClass check says); `notServed`: the snapshot API is not installed.
 */
export type SnapshotClassLookup =
  | { kind: 'found'; name: string; driver: string }
  | { kind: 'noStorageClass' }
  | { kind: 'noClass'; driver: string; storageClass: string }
  | { kind: 'notServed' }
  | { kind: 'unknown' };

export async function snapshotClassFor(
  client: KubeClient,
  workflow: Workflow,
): Promise<SnapshotClassLookup> {
  const named = workflow.spec.workspace?.volumeClaimTemplate?.spec.storageClassName;
  let storageClass: StorageClassObject | undefined;
  try {
    if (typeof named === 'string' && named !== '') {
      storageClass = await client.request<StorageClassObject>({
        path: resourcePath(STORAGECLASSES, undefined, named),
      });
    } else {
      const listed = await client.request<{ items?: StorageClassObject[] }>({
        path: resourcePath(STORAGECLASSES),
      });
      storageClass = listed.items?.find(
        (item) => item.metadata?.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true',
      );
    }
  } catch (error) {
    // 404: the StorageClass check before this one says so; 403: not ours to know.
    const status = statusOf(error);
    if (status === 403 || status === 404) return { kind: 'unknown' };
    throw error;
  }
  if (storageClass?.provisioner === undefined) return { kind: 'noStorageClass' };
  const driver = storageClass.provisioner;
  let classes: SnapshotClassObject[];
  try {
    const listed = await client.request<{ items?: SnapshotClassObject[] }>({
      path: resourcePath(VOLUME_SNAPSHOT_CLASSES),
    });
    classes = listed.items ?? [];
  } catch (error) {
    const status = statusOf(error);
    if (status === 403) return { kind: 'unknown' };
    if (status === 404) return { kind: 'notServed' };
    throw error;
  }
  const serving = classes
    .filter((item) => item.driver === driver)
    .sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
  const chosen =
    serving.find(
      (item) => item.metadata?.annotations?.[DEFAULT_SNAPSHOT_CLASS_ANNOTATION] === 'true',
    ) ?? serving[0];
  if (chosen === undefined) {
    return { kind: 'noClass', driver, storageClass: storageClass.metadata?.name ?? '' };
  }
  return { kind: 'found', name: chosen.metadata?.name ?? '', driver };
}

/** What a class lookup says is missing, as the end of a sentence; null when nothing is known to be. */
export function snapshotClassProblem(found: SnapshotClassLookup): string | null {
  switch (found.kind) {
    case 'noStorageClass':
      return 'the claim template names no StorageClass and the cluster has no default one: a claim without a provisioner cannot be restored from a snapshot';
    case 'noClass':
      return `no VolumeSnapshotClass serves the driver ${found.driver} of StorageClass ${found.storageClass}: its claims cannot be snapshotted or restored`;
    case 'notServed':
      return `this cluster does not serve ${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION} volumesnapshots (the external-snapshotter's CRDs and controller are not installed)`;
    case 'found':
    case 'unknown':
      return null;
  }
}
