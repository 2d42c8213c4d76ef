// A run of a Workflow with spec.workspace.warm (docs/snapshots.md#warm-workspaces): with no
// source of its own it starts from the Workflow's warm snapshot once one is ready, and records
// the commit it holds; until then fallback wait holds it Stalled WarmWorkspaceNotReady (saying
// how the warm-up stands) and fallback clean starts it clean. The run's own source wins, and
// a run that already started keeps what it started from whatever the warm builds do later.
import { describe, expect, it } from 'vitest';
import {
  Reasons,
  type IssueRun,
  type WarmStatus,
  type Workflow,
} from '../../../../src/api/index.js';
import {
  requestedSource,
  sourceStatus,
} from '../../../../src/controller/issuerun/snapshot-source.js';
import * as fake from '../../../support/fakes/run-table.js';

const DIGEST = `sha256:${'cd'.repeat(32)}`;
const OTHER_DIGEST = `sha256:${'ef'.repeat(32)}`;
const WARM = 'wf-warm-3';
const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const GET_SNAPSHOT = fake.getSnapshot(WARM);

const READY: WarmStatus = {
  snapshot: WARM,
  digest: DIGEST,
  commit: COMMIT,
  readyAt: '2026-03-01T09:00:00Z',
  build: 3,
  checkedAt: '2026-03-01T09:00:00Z',
  configDigest: 'sha256:c',
  reason: Reasons.WarmUpSucceeded,
  message: 'ready',
};

const warmWorkflow = (warm: WarmStatus | undefined, fallback?: 'wait' | 'clean'): Workflow => {
  const spec = fake.claimedWorkspace('fast-ssd');
  return fake.workflow(
    { workspace: { ...spec.workspace, warm: fallback ? { fallback } : {} } },
    { lastGoodConfigMap: fake.SNAPSHOT, configDigest: 'sha256:x', ...(warm ? { warm } : {}) },
  );
};

const snapshotReady = {
  match: GET_SNAPSHOT,
  answer: { body: { metadata: { name: WARM }, status: { readyToUse: true } } },
};
const classes = {
  match: fake.LIST_SNAPSHOT_CLASSES,
  answer: { body: { items: [{ metadata: { name: 'csi' }, driver: 'hostpath.csi.example' }] } },
};

const stalled = (message: string) =>
  fake.heldStalled(Reasons.WarmWorkspaceNotReady, message, [fake.GET_CLASS], 5_000);
const HEAD = "waiting for Workflow wf's warm workspace (spec.workspace.warm, fallback wait)";

const rows: fake.RunRow[] = [
  {
    name: 'a ready warm snapshot: the claim is restored from it, the Pod checks its digest, the status records the commit',
    run: fake.issueRun(),
    workflow: warmWorkflow(READY),
    steps: [
      {
        answers: [fake.classFound, snapshotReady, classes],
        want: {
          ...fake.claimStarted(
            [fake.GET_CLASS, GET_SNAPSHOT, fake.GET_CLASS, fake.LIST_SNAPSHOT_CLASSES],
            {
              workspaceSource: {
                type: 'VolumeSnapshot',
                volumeSnapshot: WARM,
                digest: DIGEST,
                commit: COMMIT,
              },
            },
          ),
          bodies: {
            [fake.CREATE_CLAIM]: {
              spec: {
                dataSource: {
                  apiGroup: 'snapshot.storage.k8s.io',
                  kind: 'VolumeSnapshot',
                  name: WARM,
                },
              },
            },
            [fake.CREATE_POD(0)]: {
              spec: {
                containers: [{ command: expect.arrayContaining(['--source-digest', DIGEST]) }],
              },
            },
          },
        },
      },
    ],
  },
  {
    name: 'no warm snapshot yet, fallback wait (the default): Stalled WarmWorkspaceNotReady, naming the warm-up',
    run: fake.issueRun(),
    workflow: warmWorkflow({ build: 1, building: 'wf-warm-1', reason: Reasons.WarmUpRunning }),
    steps: [
      { answers: [fake.classFound], want: stalled(`${HEAD}: warm-up wf-warm-1 is preparing it`) },
    ],
  },
  {
    name: 'a failed warm-up and nothing ready: the held run says the warm-up failed',
    run: fake.issueRun(),
    workflow: warmWorkflow({
      build: 1,
      reason: Reasons.WarmUpFailed,
      message: 'warm-up wf-warm-1 failed: hook_failed: after_create exited 1',
    }),
    steps: [
      {
        answers: [fake.classFound],
        want: stalled(
          `${HEAD}: its last warm-up failed (WarmUpFailed: warm-up wf-warm-1 failed: hook_failed: after_create exited 1); it is tried again`,
        ),
      },
    ],
  },
  {
    name: 'not warmed yet at all (no status.warm): held, no snapshot is ready yet',
    run: fake.issueRun(),
    workflow: warmWorkflow(undefined),
    steps: [
      { answers: [fake.classFound], want: stalled(`${HEAD}: no warm snapshot is ready yet`) },
    ],
  },
  {
    name: 'no warm snapshot yet, fallback clean: the run starts clean and says so',
    run: fake.issueRun(),
    workflow: warmWorkflow({ build: 1, building: 'wf-warm-1' }, 'clean'),
    steps: [fake.startsClean],
  },
  {
    name: "the run's own source wins over the warm snapshot (clean opts a run out)",
    run: fake.issueRun({ spec: { workspace: { source: { clean: {} } } } }),
    workflow: warmWorkflow(READY),
    steps: [fake.startsClean],
  },
];

describe('IssueRun reconciler: runs of a warm Workflow', () => {
  it.each(rows)('$name', fake.playRun);
});

describe('requestedSource with warm', () => {
  const started: IssueRun = fake.issueRun({
    status: {
      workspaceSource: {
        type: 'VolumeSnapshot',
        volumeSnapshot: 'wf-warm-1',
        digest: OTHER_DIGEST,
      },
    },
  });
  const table: { name: string; run: IssueRun; workflow: Workflow; want: unknown }[] = [
    {
      name: 'ready: the warm snapshot with its digest and commit',
      run: fake.issueRun(),
      workflow: warmWorkflow(READY),
      want: { kind: 'snapshot', name: WARM, digest: DIGEST, commit: COMMIT, warm: true },
    },
    {
      name: 'not ready, fallback wait: held',
      run: fake.issueRun(),
      workflow: warmWorkflow(undefined, 'wait'),
      want: { kind: 'warmNotReady', message: `${HEAD}: no warm snapshot is ready yet` },
    },
    {
      name: 'not ready, fallback clean: clean',
      run: fake.issueRun(),
      workflow: warmWorkflow(undefined, 'clean'),
      want: { kind: 'clean' },
    },
    {
      name: "the run's own snapshot wins",
      run: fake.issueRun({
        spec: { workspace: { source: { volumeSnapshot: { name: 'mine' }, digest: OTHER_DIGEST } } },
      }),
      workflow: warmWorkflow(READY),
      want: { kind: 'snapshot', name: 'mine', digest: OTHER_DIGEST, warm: false },
    },
    {
      name: 'no warm on the Workflow: clean',
      run: fake.issueRun(),
      workflow: fake.workflow(fake.claimedWorkspace('fast-ssd')),
      want: { kind: 'clean' },
    },
  ];
  it.each(table.map((row) => [row.name, row] as const))('%s', (_name, row) => {
    expect(requestedSource(row.run, row.workflow)).toEqual(row.want);
  });

  it('the status record carries the commit of a warm snapshot, none for a named one', () => {
    expect(sourceStatus(requestedSource(fake.issueRun(), warmWorkflow(READY)))).toEqual({
      type: 'VolumeSnapshot',
      volumeSnapshot: WARM,
      digest: DIGEST,
      commit: COMMIT,
    });
    expect(sourceStatus({ kind: 'warmNotReady', message: 'x' })).toEqual({ type: 'Clean' });
  });

  it('a run that already started keeps its record: a later warm build is not asked about', async () => {
    // Started from build 1 (its status says so); the Workflow now has build 3 ready.
    await fake.playRun({
      name: 'started',
      run: started,
      workflow: warmWorkflow(READY),
      steps: [
        {
          answers: [fake.classFound],
          want: {
            ...fake.claimStarted([fake.GET_CLASS], {
              workspaceSource: {
                type: 'VolumeSnapshot',
                volumeSnapshot: 'wf-warm-1',
                digest: OTHER_DIGEST,
              },
            }),
            bodies: {
              [fake.CREATE_CLAIM]: { spec: { dataSource: { name: 'wf-warm-1' } } },
              [fake.CREATE_POD(0)]: {
                spec: {
                  containers: [
                    { command: expect.arrayContaining(['--source-digest', OTHER_DIGEST]) },
                  ],
                },
              },
            },
          },
        },
      ],
    });
  });
});
