// A run whose workspace starts from a VolumeSnapshot (docs/snapshots.md): before its first
// claim is made, the snapshot API, the snapshot, its readiness and a class for the claim's
// driver are asked for in turn. Whatever is missing holds the run Stalled with its own reason
// and is asked again; nothing ever falls back to a clean start. Once all is there the claim is
// restored from the snapshot and the Pod's runner is given the digest to check.
import { describe, expect, it } from 'vitest';
import { Reasons, type WorkspaceSource } from '../../../../src/api/index.js';
import { failWith } from '../../../support/fakes/controller.js';
import {
  CREATE_CLAIM,
  CREATE_POD,
  GET_CLASS,
  LIST_CLASSES,
  LIST_SNAPSHOT_CLASSES,
  claimStarted,
  claimedWorkspace,
  classFound,
  getSnapshot,
  heldStalled,
  issueRun,
  playRun,
  startsClean,
  workflow,
  type RunRow,
} from '../../../support/fakes/run-table.js';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const SNAPSHOT = 'repo-warm';
const GET_SNAPSHOT = getSnapshot(SNAPSHOT);
const SOURCE: WorkspaceSource = { volumeSnapshot: { name: SNAPSHOT }, digest: DIGEST };

const claimed = workflow(claimedWorkspace('fast-ssd'));
const fromSnapshot = (storageClassName = 'fast-ssd') => {
  const spec = claimedWorkspace(storageClassName);
  return workflow({ workspace: { ...spec.workspace, source: SOURCE } });
};

const snapshotIs = (status: object) => ({
  match: GET_SNAPSHOT,
  answer: { body: { metadata: { name: SNAPSHOT }, status } },
});
const ready = snapshotIs({ readyToUse: true, restoreSize: '1Gi' });
const snapshotClasses = (...drivers: string[]) => ({
  match: LIST_SNAPSHOT_CLASSES,
  answer: { body: { items: drivers.map((driver) => ({ driver })) } },
});
/** The StorageClasses listed (looked for when the claim template names none). */
const classesListed = (...items: object[]) => ({
  match: LIST_CLASSES,
  answer: { body: { items } },
});
const snapshotMissing = {
  match: GET_SNAPSHOT,
  answer: {
    status: 404,
    reason: 'NotFound',
    details: { name: SNAPSHOT, group: 'snapshot.storage.k8s.io', kind: 'volumesnapshots' },
  },
};

const stalled = (reason: string, message: string, before: string[]) =>
  heldStalled(reason, message, before, 5_000);

const restoredSource = {
  workspaceSource: { type: 'VolumeSnapshot' as const, volumeSnapshot: SNAPSHOT, digest: DIGEST },
};
const restored = (before: string[]) => ({
  ...claimStarted(before, restoredSource),
  bodies: {
    [CREATE_CLAIM]: {
      spec: {
        storageClassName: 'fast-ssd',
        dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: SNAPSHOT },
      },
    },
    [CREATE_POD(0)]: {
      spec: {
        securityContext: { fsGroupChangePolicy: 'OnRootMismatch' },
        containers: [{ command: expect.arrayContaining(['--source-digest', DIGEST]) }],
      },
    },
  },
});
const ALL_ASKED = [GET_CLASS, GET_SNAPSHOT, GET_CLASS, LIST_SNAPSHOT_CLASSES];

const rows: RunRow[] = [
  {
    name: 'the snapshot API is not served: Stalled SnapshotsNotSupported, never a clean start',
    run: issueRun(),
    workflow: fromSnapshot(),
    steps: [
      {
        answers: [classFound],
        want: stalled(
          Reasons.SnapshotsNotSupported,
          `the workspace source is VolumeSnapshot ${SNAPSHOT}, but this cluster does not serve snapshot.storage.k8s.io/v1 volumesnapshots (the external-snapshotter's CRDs and controller are not installed): no claim or Pod is made`,
          [GET_CLASS, GET_SNAPSHOT],
        ),
      },
    ],
  },
  {
    name: "the snapshot does not exist in the run's namespace: Stalled SnapshotNotFound; made meanwhile, the run starts from it",
    run: issueRun(),
    workflow: fromSnapshot(),
    steps: [
      {
        answers: [classFound, snapshotMissing],
        want: stalled(
          Reasons.SnapshotNotFound,
          `waiting for VolumeSnapshot ${SNAPSHOT} in namespace ns (the workspace source): not found; a claim can only be restored from a snapshot of its own namespace`,
          [GET_CLASS, GET_SNAPSHOT],
        ),
      },
      {
        advanceMs: 5_000,
        answers: [classFound, ready, snapshotClasses('other.csi', 'hostpath.csi.example')],
        want: restored(ALL_ASKED),
      },
    ],
  },
  {
    name: "the snapshot is not readyToUse: Stalled SnapshotNotReady with the snapshotter's error",
    run: issueRun(),
    workflow: fromSnapshot(),
    steps: [
      {
        answers: [
          classFound,
          snapshotIs({ readyToUse: false, error: { message: 'source claim not bound' } }),
        ],
        want: stalled(
          Reasons.SnapshotNotReady,
          `waiting for VolumeSnapshot ${SNAPSHOT} (the workspace source) to be readyToUse: source claim not bound`,
          [GET_CLASS, GET_SNAPSHOT],
        ),
      },
    ],
  },
  {
    name: "no VolumeSnapshotClass serves the claim's driver: Stalled SnapshotClassNotFound",
    run: issueRun(),
    workflow: fromSnapshot(),
    steps: [
      {
        answers: [classFound, ready, snapshotClasses('other.csi')],
        want: stalled(
          Reasons.SnapshotClassNotFound,
          `the workspace source is VolumeSnapshot ${SNAPSHOT}, but no VolumeSnapshotClass serves the driver hostpath.csi.example of StorageClass fast-ssd: its claims cannot be snapshotted or restored`,
          ALL_ASKED,
        ),
      },
    ],
  },
  {
    name: 'no class named and no default class: Stalled SnapshotClassNotFound',
    run: issueRun(),
    workflow: fromSnapshot(''),
    steps: [
      {
        answers: [ready, classesListed({ metadata: { name: 'slow' }, provisioner: 'x' })],
        want: stalled(
          Reasons.SnapshotClassNotFound,
          `the workspace source is VolumeSnapshot ${SNAPSHOT}, but the claim template names no StorageClass and the cluster has no default one: a claim without a provisioner cannot be restored from a snapshot`,
          [GET_SNAPSHOT, LIST_CLASSES],
        ),
      },
    ],
  },
  {
    name: 'the default class is used when the template names none',
    run: issueRun(),
    workflow: fromSnapshot(''),
    steps: [
      {
        answers: [
          ready,
          classesListed({
            metadata: {
              name: 'std',
              annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
            },
            provisioner: 'hostpath.csi.example',
          }),
          snapshotClasses('hostpath.csi.example'),
        ],
        want: claimStarted([GET_SNAPSHOT, LIST_CLASSES, LIST_SNAPSHOT_CLASSES], restoredSource),
      },
    ],
  },
  {
    name: "the IssueRun's own source wins over its Workflow's (here: clean over a snapshot)",
    run: issueRun({ spec: { workspace: { source: { clean: {} } } } }),
    workflow: fromSnapshot(),
    steps: [startsClean],
  },
  {
    name: "an IssueRun's snapshot source on a Workflow with no claim template: Stalled WorkspaceSourceUnsupported",
    run: issueRun({ spec: { workspace: { source: SOURCE } } }),
    workflow: workflow(),
    steps: [
      {
        want: stalled(
          Reasons.WorkspaceSourceUnsupported,
          `the workspace source is VolumeSnapshot ${SNAPSHOT}, but Workflow wf has no spec.workspace.volumeClaimTemplate: only a claim can be restored from a snapshot`,
          [],
        ),
      },
    ],
  },
  {
    name: 'a controller that may not read snapshots goes on: the provisioner has the last word',
    run: issueRun(),
    workflow: fromSnapshot(),
    steps: [
      {
        answers: [classFound, failWith(GET_SNAPSHOT, 403, 'Forbidden')],
        want: restored([GET_CLASS, GET_SNAPSHOT]),
      },
    ],
  },
  {
    name: 'a clean Workflow records a clean start',
    run: issueRun(),
    workflow: claimed,
    steps: [startsClean],
  },
];

describe('IssueRun reconciler: a workspace restored from a VolumeSnapshot', () => {
  it.each(rows)('$name', playRun);
});
