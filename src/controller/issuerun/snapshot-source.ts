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
import type { KubeClient } from '../runtime/client.js';
import { lookUpObject } from '../runtime/lookup.js';
import {
  VOLUME_SNAPSHOTS,
  snapshotClassFor,
  snapshotClassProblem,
  snapshotsUnsupportedWhy,
} from '../shared/snapshot-support.js';

export {
  VOLUME_SNAPSHOTS,
  VOLUME_SNAPSHOT_CLASSES,
  snapshotClassFor,
  snapshotClassProblem,
  snapshotsUnsupportedWhy,
  type SnapshotClassLookup,
} from '../shared/snapshot-support.js';

/**
 * Where a run's workspace starts from (docs/snapshots.md), and whether the cluster can give it
 * that start. A snapshot source that cannot be honoured holds the run with a reason; it is
 * never quietly replaced by a clean start, which would run the agent on a tree nobody asked for.
 */
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
