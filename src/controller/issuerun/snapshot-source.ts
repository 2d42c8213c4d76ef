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
/** The external-snapshotter's mark of the class to use for a driver when none is named. */
const DEFAULT_SNAPSHOT_CLASS_ANNOTATION = 'snapshot.storage.kubernetes.io/is-default-class';

/**
 * What a run's workspace starts from: clean; a snapshot with its digest (the run's own
 * source, its Workflow's, or the Workflow's warm snapshot, with the commit that one holds);
 * or nothing yet: a warm Workflow with no ready snapshot whose fallback is to wait.
 */
export type RequestedSource =
  | { kind: 'clean' }
  | { kind: 'snapshot'; name: string; digest: string; commit?: string | undefined; warm: boolean }
  | { kind: 'warmNotReady'; message: string };

/**
 * The source the run asks for: its own, else its Workflow's, else the Workflow's warm
 * snapshot when it has one ready (else its fallback); absent everywhere: clean.
 */
export function requestedSource(run: IssueRun, workflow: Workflow): RequestedSource {
  const named = run.spec.workspace?.source ?? workflow.spec.workspace?.source;
  if (named) return namedSource(named);
  const warm = workflow.spec.workspace?.warm;
  if (!warm) return { kind: 'clean' };
  const status = workflow.status?.warm;
  if (status?.snapshot !== undefined && status.digest !== undefined) {
    return {
      kind: 'snapshot',
      name: status.snapshot,
      digest: status.digest,
      commit: status.commit,
      warm: true,
    };
  }
  if (warm.fallback === 'clean') return { kind: 'clean' };
  return { kind: 'warmNotReady', message: warmNotReadyMessage(workflow) };
}

function namedSource(source: WorkspaceSource): RequestedSource {
  if (!source.volumeSnapshot || source.digest === undefined) return { kind: 'clean' };
  return { kind: 'snapshot', name: source.volumeSnapshot.name, digest: source.digest, warm: false };
}

/** What a run held for its Workflow's warm snapshot is told: how the warm-up stands. */
function warmNotReadyMessage(workflow: Workflow): string {
  const name = workflow.metadata.name ?? '';
  const warm = workflow.status?.warm;
  const head = `waiting for Workflow ${name}'s warm workspace (spec.workspace.warm, fallback wait)`;
  if (warm?.reason === Reasons.WarmUpFailed) {
    return `${head}: its last warm-up failed (WarmUpFailed: ${warm.message ?? ''}); it is tried again`;
  }
  if (warm?.reason === Reasons.WarmWorkspaceUnsupported) {
    return `${head}: it cannot be warmed (WarmWorkspaceUnsupported: ${warm.message ?? ''})`;
  }
  if (warm?.building !== undefined) {
    return `${head}: warm-up ${warm.building} is preparing it`;
  }
  return `${head}: no warm snapshot is ready yet`;
}

/**
 * The status record of a source, as the run starts. A warm Workflow's run with nothing
 * ready is held before it starts, so warmNotReady is only met for a run whose Pods were made
 * before any source was recorded: it started clean.
 */
export function sourceStatus(source: RequestedSource): WorkspaceSourceStatus {
  if (source.kind !== 'snapshot') return { type: 'Clean' };
  return {
    type: 'VolumeSnapshot',
    volumeSnapshot: source.name,
    digest: source.digest,
    ...(source.commit === undefined ? {} : { commit: source.commit }),
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
  if (source.kind === 'warmNotReady') {
    return { reason: Reasons.WarmWorkspaceNotReady, message: source.message };
  }
  if (source.kind === 'clean') return null;
  const { name } = source;
  const unsupported = snapshotsUnsupportedWhy(workflow, config);
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
  const lookup = await snapshotClassFor(client, workflow);
  const why = snapshotClassProblem(lookup);
  if (why === null) return null;
  return {
    reason: Reasons.SnapshotClassNotFound,
    message: `the workspace source is VolumeSnapshot ${name}, but ${why}`,
  };
}

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
