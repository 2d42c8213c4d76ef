import {
  Reasons,
  SNAPSHOT_API_GROUP,
  SNAPSHOT_API_VERSION,
  type IssueRun,
  type Workflow,
  type WorkspaceSource,
  type WorkspaceSourceStatus,
} from '../../api/index.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import type { KubeClient, ResourceRef } from '../runtime/client.js';
import { STORAGECLASSES, resourcePath, statusOf } from '../runtime/client.js';
import { lookUpObject } from '../runtime/lookup.js';

/**
 * Where a run's workspace starts from (docs/snapshots.md), and whether the cluster can give it
 * that start. A snapshot source that cannot be honoured holds the run with a reason; it is
 * never quietly replaced by a clean start, which would run the agent on a tree nobody asked for.
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

/** The source the run asked for: its own, else its Workflow's; absent means clean. */
export function requestedSource(run: IssueRun, workflow: Workflow): WorkspaceSource | undefined {
  return run.spec.workspace?.source ?? workflow.spec.workspace?.source;
}

/** The status record of a source, as the run starts. */
export function sourceStatus(source: WorkspaceSource | undefined): WorkspaceSourceStatus {
  if (!source?.volumeSnapshot || source.digest === undefined) return { type: 'Clean' };
  return {
    type: 'VolumeSnapshot',
    volumeSnapshot: source.volumeSnapshot.name,
    digest: source.digest,
  };
}

export interface SourceRefusal {
  reason: string;
  message: string;
}

interface VolumeSnapshotObject {
  status?: { readyToUse?: boolean; error?: { message?: string } };
}

/**
 * Why the run's snapshot source cannot be used yet, or null when it can (or the run starts
 * clean). Asked before the first attempt's claim is made: later attempts reuse that claim.
 * A 403 proves nothing (a controller given fewer verbs): the claim is made and the
 * provisioner has the last word.
 */
export async function refuseSnapshotSource(
  client: KubeClient,
  run: IssueRun,
  workflow: Workflow,
  config: WorkflowConfig,
): Promise<SourceRefusal | null> {
  const source = requestedSource(run, workflow);
  const name = source?.volumeSnapshot?.name;
  if (name === undefined) return null;
  const unsupported = unsupportedWhy(workflow, config);
  if (unsupported !== null) {
    return {
      reason: Reasons.WorkspaceSourceUnsupported,
      message: `the workspace source is VolumeSnapshot ${name}, but ${unsupported}`,
    };
  }
  const namespace = run.metadata.namespace ?? '';
  const found = await lookUpObject<VolumeSnapshotObject>(client, VOLUME_SNAPSHOTS, namespace, name);
  if (found.kind === 'forbidden') return null;
  if (found.kind === 'notServed') {
    return {
      reason: Reasons.SnapshotsNotSupported,
      message: `the workspace source is VolumeSnapshot ${name}, but this cluster does not serve ${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION} volumesnapshots (the external-snapshotter's CRDs and controller are not installed): no claim or Pod is made`,
    };
  }
  if (found.kind === 'notFound') {
    return {
      reason: Reasons.SnapshotNotFound,
      message: `waiting for VolumeSnapshot ${name} in namespace ${namespace} (the workspace source): not found; a claim can only be restored from a snapshot of its own namespace`,
    };
  }
  const snapshot = found.object;
  if (snapshot.status?.readyToUse !== true) {
    const error = snapshot.status?.error?.message;
    return {
      reason: Reasons.SnapshotNotReady,
      message: `waiting for VolumeSnapshot ${name} (the workspace source) to be readyToUse${error ? `: ${error}` : ''}`,
    };
  }
  return missingSnapshotClass(client, workflow, name);
}

function unsupportedWhy(workflow: Workflow, config: WorkflowConfig): string | null {
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
  driver?: string;
}

/** The claim's StorageClass must have a driver some VolumeSnapshotClass serves. */
async function missingSnapshotClass(
  client: KubeClient,
  workflow: Workflow,
  snapshot: string,
): Promise<SourceRefusal | null> {
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
    if (storageClass?.provisioner === undefined) {
      return {
        reason: Reasons.SnapshotClassNotFound,
        message: `the workspace source is VolumeSnapshot ${snapshot}, but the claim template names no StorageClass and the cluster has no default one: a claim without a provisioner cannot be restored from a snapshot`,
      };
    }
    const classes = await client.request<{ items?: SnapshotClassObject[] }>({
      path: resourcePath(VOLUME_SNAPSHOT_CLASSES),
    });
    const driver = storageClass.provisioner;
    if ((classes.items ?? []).some((item) => item.driver === driver)) return null;
    return {
      reason: Reasons.SnapshotClassNotFound,
      message: `the workspace source is VolumeSnapshot ${snapshot}, but no VolumeSnapshotClass serves the driver ${driver} of StorageClass ${storageClass.metadata?.name ?? ''}: its claims cannot be snapshotted or restored`,
    };
  } catch (error) {
    // 404: the StorageClass check before this one says so; 403: not ours to know.
    const status = statusOf(error);
    if (status === 403 || status === 404) return null;
    throw error;
  }
}
