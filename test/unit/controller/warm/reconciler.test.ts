// The warm reconciler's order of writes (docs/snapshots.md#warm-workspaces): a Workflow never
// warm costs no request; a warm-up's build is recorded in status.warm (after its Event) before
// its objects are made; a prepared warm-up is snapshotted, recorded once the snapshot is ready,
// and only then are its Pod, inputs and claim deleted. status.warm is written alone, as a merge
// patch of that field.
import { describe, expect, it } from 'vitest';
import {
  Reasons,
  encodeWarmUpResult,
  type IssueRun,
  type WarmStatus,
  type Workflow,
} from '../../../../src/api/index.js';
import { createLifecycleEventWriter } from '../../../../src/controller/events/recorder.js';
import { PODS } from '../../../../src/controller/runtime/client.js';
import {
  ISSUERUNS,
  WORKFLOWS,
  type PodObject,
} from '../../../../src/controller/shared/resources.js';
import { createWarmReconciler } from '../../../../src/controller/warm/reconciler.js';
import {
  FakeClock,
  FakeInformer,
  FakeKubeClient,
  fakeWorkflowConfigLoader,
} from '../../../support/fakes/controller.js';
import {
  SNAPSHOT,
  T0,
  WORKFLOW_UID,
  agentStatus,
  claimedWorkspace,
  workflow,
  workflowText,
} from '../../../support/fakes/objects.js';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const KEY = 'ns/wf';

function setup(wf: Workflow, pods: PodObject[] = []) {
  const client = new FakeKubeClient();
  const clock = new FakeClock(T0);
  const reconcile = createWarmReconciler({
    client,
    workflows: new FakeInformer<Workflow>(WORKFLOWS, [wf]),
    issueRuns: new FakeInformer<IssueRun>(ISSUERUNS, []),
    pods: new FakeInformer<PodObject>(PODS, pods),
    loadWorkflowConfig: fakeWorkflowConfigLoader({ [SNAPSHOT]: workflowText() }).load,
    operatorImage: 'ghcr.io/lorenz-dev/lorenz:0.1.0',
    now: clock.now,
    events: createLifecycleEventWriter({ client, reportingInstance: 'test', now: clock.now }),
  });
  return { client, reconcile };
}

/** The body of the Workflow's status patch. */
const statusPatch = (client: FakeKubeClient) =>
  client.actions.find((action) => action.summary === 'PATCH workflows/wf/status')?.body;

const warmWorkflow = (warm?: WarmStatus): Workflow => {
  const spec = claimedWorkspace('fast-ssd');
  return workflow(
    { workspace: { ...spec.workspace, warm: {} } },
    { lastGoodConfigMap: SNAPSHOT, configDigest: 'sha256:x', ...(warm ? { warm } : {}) },
  );
};
const classesFound = [
  {
    match: 'GET storageclasses/fast-ssd',
    answer: { body: { metadata: { name: 'fast-ssd' }, provisioner: 'csi.example' } },
  },
  {
    match: 'GET volumesnapshotclasses',
    answer: { body: { items: [{ metadata: { name: 'snaps' }, driver: 'csi.example' }] } },
  },
];

/** The warm-up Pod `name`, owned by the Workflow, as it ended: `status`. */
const warmUpPod = (name: string, status: PodObject['status']): PodObject => ({
  metadata: {
    name,
    namespace: 'ns',
    annotations: { 'lorenz.dev/warm-config-digest': 'sha256:cfg' },
    ownerReferences: [
      { apiVersion: 'lorenz.dev/v1alpha1', kind: 'Workflow', name: 'wf', uid: WORKFLOW_UID },
    ],
  },
  status,
});

/**
 * The requests of a full warm-up's start, in order: the snapshot class asked for, its Event,
 * status.warm with the build, then its objects, claim included.
 */
const fullWarmUpStart = (build: number) => [
  'GET storageclasses/fast-ssd',
  'GET volumesnapshotclasses',
  expect.stringMatching(new RegExp(`^POST events/wf\\.uidwf1\\.warm-${build}-started$`)),
  'PATCH workflows/wf/status',
  `POST configmaps/wf-warm-${build}`,
  `POST persistentvolumeclaims/wf-warm-${build}`,
  `POST pods/wf-warm-${build}`,
];

describe('the warm reconciler', () => {
  it('a Workflow that was never warm costs no request', async () => {
    const { client, reconcile } = setup(workflow(claimedWorkspace('fast-ssd')));
    expect(await reconcile(KEY)).toBeUndefined();
    expect(client.summaries()).toEqual([]);
  });

  it('starts a warm-up: its Event, then status.warm with the build, then its objects', async () => {
    const { client, reconcile } = setup(warmWorkflow());
    client.answer(...classesFound);
    await reconcile(KEY);
    const summaries = client.summaries();
    expect(summaries.slice(0, 7)).toEqual(fullWarmUpStart(1));
    expect(statusPatch(client)).toEqual({
      status: {
        warm: expect.objectContaining({
          build: 1,
          building: 'wf-warm-1',
          reason: Reasons.WarmUpRunning,
          snapshot: null,
        }),
      },
    });
  });

  it('without a snapshot class for the driver: WarmWorkspaceUnsupported, no warm-up', async () => {
    const { client, reconcile } = setup(warmWorkflow());
    client.answer(classesFound[0] as (typeof classesFound)[0], {
      match: 'GET volumesnapshotclasses',
      answer: { body: { items: [] } },
    });
    expect(await reconcile(KEY)).toEqual({ requeueAfter: 60_000 });
    expect(client.summaries().filter((s) => s.startsWith('POST'))).toEqual([]);
    expect(statusPatch(client)).toMatchObject({
      status: {
        warm: {
          reason: Reasons.WarmWorkspaceUnsupported,
          message:
            'the workspace cannot be warmed: no VolumeSnapshotClass serves the driver csi.example of StorageClass fast-ssd: its claims cannot be snapshotted or restored',
        },
      },
    });
  });

  it('records a ready snapshot, ending the failures before it, then deletes the warm-up objects', async () => {
    const prepared = encodeWarmUpResult({
      outcome: 'prepared',
      digest: DIGEST,
      commit: null,
      files: 2,
      bytes: 20,
      prepareMs: 3000,
      digestMs: 1,
    });
    const pod = warmUpPod('wf-warm-1', {
      phase: 'Succeeded',
      containerStatuses: [agentStatus({ terminated: { exitCode: 0, message: prepared } })],
    });
    const { client, reconcile } = setup(
      warmWorkflow({
        build: 1,
        building: 'wf-warm-1',
        failures: 2,
        failedAt: '2026-03-01T09:58:00Z',
        reason: Reasons.WarmUpRunning,
      }),
      [pod],
    );
    client.answer({
      match: 'GET volumesnapshots/wf-warm-1',
      answer: { body: { metadata: { name: 'wf-warm-1' }, status: { readyToUse: true } } },
    });
    await reconcile(KEY);
    expect(client.summaries()).toEqual([
      'GET volumesnapshots/wf-warm-1',
      expect.stringMatching(/^POST events\/wf\.uidwf1\.warm-1-succeeded$/),
      'PATCH workflows/wf/status',
      'DELETE configmaps/wf-warm-1',
      'DELETE persistentvolumeclaims/wf-warm-1',
      'DELETE pods/wf-warm-1',
      'GET volumesnapshots',
    ]);
    expect(statusPatch(client)).toEqual({
      status: {
        warm: {
          snapshot: 'wf-warm-1',
          digest: DIGEST,
          commit: null,
          readyAt: '2026-03-01T10:00:00Z',
          build: 1,
          building: null,
          checkedAt: '2026-03-01T10:00:00Z',
          configDigest: 'sha256:cfg',
          failures: null,
          failedAt: null,
          reason: Reasons.WarmUpSucceeded,
          message:
            'VolumeSnapshot wf-warm-1 holds the prepared workspace (2 files, 20 bytes, prepared in 3 s)',
        },
      },
    });
  });

  it('records a failure in status.warm, counted with those before it, and backs off', async () => {
    const pod = warmUpPod('wf-warm-2', {
      phase: 'Failed',
      containerStatuses: [agentStatus({ terminated: { exitCode: 1, reason: 'Error' } })],
    });
    const { client, reconcile } = setup(
      warmWorkflow({
        build: 2,
        building: 'wf-warm-2',
        failures: 1,
        failedAt: '2026-03-01T09:55:00Z',
        reason: Reasons.WarmUpRunning,
      }),
      [pod],
    );
    // The second failure in a row waits 30 s·2.
    expect(await reconcile(KEY)).toEqual({ requeueAfter: 60_000 });
    expect(statusPatch(client)).toMatchObject({
      status: {
        warm: {
          building: null,
          failures: 2,
          failedAt: '2026-03-01T10:00:00Z',
          reason: Reasons.WarmUpFailed,
        },
      },
    });
  });

  it('a head check that found the branch moved on: its objects go, then the full warm-up starts', async () => {
    const moved = 'f'.repeat(40);
    const pod = warmUpPod('wf-warm-2', {
      phase: 'Succeeded',
      containerStatuses: [
        agentStatus({
          terminated: {
            exitCode: 0,
            message: encodeWarmUpResult({ outcome: 'moved', commit: moved }),
          },
        }),
      ],
    });
    const { client, reconcile } = setup(
      warmWorkflow({
        snapshot: 'wf-warm-1',
        commit: 'c'.repeat(40),
        build: 2,
        building: 'wf-warm-2',
        reason: Reasons.WarmUpRunning,
      }),
      [pod],
    );
    client.answer(...classesFound);
    await reconcile(KEY);
    expect(client.summaries().slice(0, 10)).toEqual([
      'DELETE configmaps/wf-warm-2',
      'DELETE persistentvolumeclaims/wf-warm-2',
      'DELETE pods/wf-warm-2',
      ...fullWarmUpStart(3),
    ]);
    expect(statusPatch(client)).toMatchObject({
      status: {
        warm: {
          snapshot: 'wf-warm-1',
          build: 3,
          building: 'wf-warm-3',
          reason: Reasons.WarmUpRunning,
          message: `warm-up wf-warm-3 started: the default branch moved on from ${'c'.repeat(40)} to ${moved}`,
        },
      },
    });
    // The full warm-up clones the new head: no --unless-commit.
    const made = client.actions.find((action) => action.summary === 'POST pods/wf-warm-3');
    expect(JSON.stringify(made?.body)).not.toContain('unless-commit');
  });

  it('a restarted controller keeps the backoff: the failures are read back from status.warm', async () => {
    // A fresh reconciler, as after a restart: it remembers nothing of its own.
    const { client, reconcile } = setup(
      warmWorkflow({
        build: 2,
        failures: 2,
        failedAt: '2026-03-01T09:59:30Z',
        reason: Reasons.WarmUpFailed,
      }),
    );
    client.answer(...classesFound);
    // 60 s of backoff from 30 s ago: 30 s to go, and nothing started meanwhile.
    expect(await reconcile(KEY)).toEqual({ requeueAfter: 30_000 });
    expect(client.summaries().filter((s) => !s.startsWith('GET'))).toEqual([]);
  });

  it('warm turned off: deletes the warm snapshots no run needs, then drops status.warm', async () => {
    const off = workflow(claimedWorkspace('fast-ssd'), {
      lastGoodConfigMap: SNAPSHOT,
      warm: { snapshot: 'wf-warm-2', digest: DIGEST, build: 2, reason: Reasons.WarmUpSucceeded },
    });
    const { client, reconcile } = setup(off);
    const owned = (name: string) => ({
      metadata: { name, ownerReferences: [{ controller: true, uid: WORKFLOW_UID }] },
    });
    client.answer(
      {
        match: 'GET volumesnapshots',
        answer: { body: { items: [owned('wf-warm-1'), owned('wf-warm-2')] } },
      },
      { match: 'GET persistentvolumeclaims', answer: { body: { items: [] } } },
    );
    await reconcile(KEY);
    expect(client.summaries()).toEqual([
      'GET volumesnapshots',
      'GET persistentvolumeclaims',
      'DELETE volumesnapshots/wf-warm-1',
      'DELETE volumesnapshots/wf-warm-2',
      'PATCH workflows/wf/status',
    ]);
    expect(client.actions.at(-1)?.body).toEqual({ status: { warm: null } });
  });
});
