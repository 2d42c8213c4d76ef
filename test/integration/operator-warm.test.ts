// Warm workspaces on a real kube-apiserver with the snapshot CRDs and no node (docs/snapshots.md
// #warm-workspaces): the warm controller makes the warm-up's Pod, inputs and claim; the test
// plays the kubelet (the Pod's end and termination message) and the snapshotter (readyToUse);
// the controller then records status.warm, deletes the warm-up's objects, starts held runs
// from the snapshot, rebuilds on a config change, collects the superseded snapshot once no
// run needs it, holds (or starts clean) runs while a failed warm-up has nothing ready, and
// refuses an after_create that depends on the issue; a snapshot source of another namespace
// holds its run SnapshotNotFound. The controller runs as its
// ServiceAccount: a verb missing from config/rbac fails here.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  installCrds,
  startControlPlane,
  type ControlPlane,
} from '../../hack/cluster/control-plane.js';
import {
  encodeWarmUpResult,
  type IssueRun,
  type WarmUpResult,
  type Workflow,
} from '../../src/api/index.js';
import type { RunningController } from '../../src/controller/main.js';
import { createKubeClient, type KubeClient } from '../../src/controller/runtime/client.js';
import {
  NAMESPACE,
  controllerKubeConfig,
  installOperator,
  issueRunManifest,
  path,
  podTemplate,
  root,
  startTestController,
  until,
} from './operator-harness.js';

const exec = promisify(execFile);
const DRIVER = 'hostpath.csi.k8s.io';
const DIGEST_1 = `sha256:${'1a'.repeat(32)}`;
const DIGEST_2 = `sha256:${'2b'.repeat(32)}`;
const COMMIT_1 = '1111111111111111111111111111111111111111';
const COMMIT_2 = '2222222222222222222222222222222222222222';
const snapshots = `/apis/snapshot.storage.k8s.io/v1/namespaces/${NAMESPACE}/volumesnapshots`;
const claims = `/api/v1/namespaces/${NAMESPACE}/persistentvolumeclaims`;

let cp: ControlPlane;
let admin: KubeClient;
let controller: RunningController | undefined;

beforeAll(async () => {
  // The pvc-protection loop: a claim deleted once its Pod has ended goes at once.
  cp = await startControlPlane({ controllers: ['persistentvolumeclaim-protection-controller'] });
  admin = createKubeClient(cp.kubeConfig);
  await installOperator(cp);
  const { stdout } = await exec(join(root, 'hack', 'tools.sh'), ['path', 'snapshot-controller']);
  const crdDir = join(`${stdout.trim()}.manifests`, 'crds');
  await installCrds(
    cp,
    readdirSync(crdDir).map((file) => join(crdDir, file)),
  );
  await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`,
    body: { metadata: { name: 'default' } },
  });
  await admin.request({
    method: 'POST',
    path: '/apis/storage.k8s.io/v1/storageclasses',
    body: { metadata: { name: 'csi-hostpath' }, provisioner: DRIVER },
  });
  await admin.request({
    method: 'POST',
    path: '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses',
    body: {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: 'csi-snap' },
      driver: DRIVER,
      deletionPolicy: 'Delete',
    },
  });
  controller = await startTestController(controllerKubeConfig(cp), NAMESPACE, {
    warmGcGraceMs: 500,
  });
});
afterAll(async () => {
  await controller?.stop();
  admin?.close();
  await cp?.stop();
});

const text = (afterCreate: string, git = true) =>
  `---
tracker:
  kind: memory
agent:
  kind: scripted
agents:
  scripted:
    bridge_command: node /lorenz-bin/scripted-agent.mjs
hooks:
  after_create: ${JSON.stringify(afterCreate)}
${git ? 'workspace:\n  git:\n    repo: https://example.com/web.git\n' : ''}---
Work on {{ issue.identifier }}.
`;

const claimTemplate = {
  spec: {
    storageClassName: 'csi-hostpath',
    accessModes: ['ReadWriteOnce'],
    resources: { requests: { storage: '1Gi' } },
  },
};

/** Workflow `name` of this spec, created as the admin. */
async function createWorkflowOf(name: string, spec: object) {
  await admin.request({
    method: 'POST',
    path: path.workflows(),
    body: { apiVersion: 'lorenz.dev/v1alpha1', kind: 'Workflow', metadata: { name }, spec },
  });
}

const createWarmWorkflow = (name: string, afterCreate: string, warm: object = {}) =>
  createWorkflowOf(name, {
    workflow: text(afterCreate),
    podTemplate,
    workspace: { volumeClaimTemplate: claimTemplate, warm },
  });

const getWorkflow = (name: string) => admin.request<Workflow>({ path: path.workflows(name) });
const getPod = (name: string) => admin.request<V1Pod>({ path: `${path.pods}/${name}` });
const exists = async (at: string): Promise<boolean> => {
  try {
    await admin.request({ path: at });
    return true;
  } catch {
    return false;
  }
};
const createRun = (name: string, workflow: string, spec: object = {}) =>
  admin.request({
    method: 'POST',
    path: path.issueRuns(),
    body: issueRunManifest(
      name,
      workflow,
      { id: name, identifier: name.toUpperCase(), title: name },
      spec,
    ),
  });
const getRun = (name: string) => admin.request<IssueRun>({ path: path.issueRuns(name) });

/** Plays the kubelet: the warm-up Pod ends `phase` with `result` in its termination message. */
async function endPod(name: string, phase: 'Succeeded' | 'Failed', result: WarmUpResult) {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await admin.request({
    method: 'PATCH',
    path: `${path.pods}/${name}/status`,
    patchType: 'merge',
    body: {
      status: {
        phase,
        containerStatuses: [
          {
            name: 'agent',
            image: 'lorenz-test/agent:1',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: {
              terminated: {
                exitCode: phase === 'Succeeded' ? 0 : 1,
                reason: phase === 'Succeeded' ? 'Completed' : 'Error',
                message: encodeWarmUpResult(result),
                startedAt: now,
                finishedAt: now,
              },
            },
          },
        ],
      },
    },
  });
}

/** Plays the snapshotter: the snapshot is ready to restore from. */
const markReady = (name: string) =>
  admin.request({
    method: 'PATCH',
    path: `${snapshots}/${name}/status`,
    patchType: 'merge',
    body: { status: { readyToUse: true, restoreSize: '1Gi' } },
  });

const prepared = (digest: string, commit: string): WarmUpResult => ({
  outcome: 'prepared',
  digest,
  commit,
  files: 3,
  bytes: 300,
  prepareMs: 1200,
  digestMs: 4,
});

const warmOf = async (name: string) => (await getWorkflow(name)).status?.warm;

describe('warm workspaces', () => {
  it('warms up, snapshots, records status.warm, deletes the warm-up, and a held run starts from the snapshot', async () => {
    await createWarmWorkflow('web', 'npm ci');
    const pod = await until('the warm-up Pod', () => getPod('web-warm-1').catch(() => undefined));
    const command = pod.spec?.containers[0]?.command ?? [];
    expect(command).toEqual(expect.arrayContaining(['runner', '--prepare']));
    expect(command).not.toContain('--slot');
    expect(command).not.toContain('--unless-commit');
    expect(pod.metadata?.labels).toMatchObject({ 'lorenz.dev/warm-of': 'web' });
    expect(pod.metadata?.labels).not.toHaveProperty('lorenz.dev/issuerun');
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Workflow', name: 'web' });
    const inputs = await admin.request<{ data?: Record<string, string> }>({
      path: path.configMaps('web-warm-1'),
    });
    expect(Object.keys(inputs.data ?? {}).sort()).toEqual(['manifest.json', 'workflow.md']);
    const claim = await admin.request<V1PersistentVolumeClaim>({ path: `${claims}/web-warm-1` });
    expect(claim.spec?.storageClassName).toBe('csi-hostpath');
    expect(await warmOf('web')).toMatchObject({
      build: 1,
      building: 'web-warm-1',
      reason: 'WarmUpRunning',
    });

    // A run meanwhile (fallback wait, the default) is held, saying why.
    await createRun('web-1', 'web');
    const held = await until('web-1 held', async () => {
      const run = await getRun('web-1');
      return run.status?.reason === 'WarmWorkspaceNotReady' ? run : undefined;
    });
    expect(held.status?.message).toContain('warm-up web-warm-1 is preparing it');

    await endPod('web-warm-1', 'Succeeded', prepared(DIGEST_1, COMMIT_1));
    const snapshot = await until('the warm snapshot', () =>
      admin
        .request<{
          metadata?: { labels?: Record<string, string> };
          spec?: {
            volumeSnapshotClassName?: string;
            source?: { persistentVolumeClaimName?: string };
          };
        }>({ path: `${snapshots}/web-warm-1` })
        .catch(() => undefined),
    );
    expect(snapshot.spec).toEqual({
      volumeSnapshotClassName: 'csi-snap',
      source: { persistentVolumeClaimName: 'web-warm-1' },
    });
    expect(snapshot.metadata?.labels).toMatchObject({ 'lorenz.dev/warm-of': 'web' });
    await markReady('web-warm-1');
    const warm = await until('status.warm recorded', async () => {
      const value = await warmOf('web');
      return value?.snapshot ? value : undefined;
    });
    expect(warm).toMatchObject({
      snapshot: 'web-warm-1',
      digest: DIGEST_1,
      commit: COMMIT_1,
      build: 1,
      reason: 'WarmUpSucceeded',
    });
    expect(warm.building).toBeUndefined();
    expect(warm.checkedAt).toBe(warm.readyAt);
    expect(warm.configDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The Workflow reconciler's own writes (run counts, conditions) leave status.warm alone.
    expect((await getWorkflow('web')).status?.observedGeneration).toBe(1);
    await until('the warm-up objects deleted', async () => {
      const left = [
        ...((await exists(`${path.pods}/web-warm-1`)) ? ['Pod'] : []),
        ...((await exists(path.configMaps('web-warm-1'))) ? ['ConfigMap'] : []),
        ...((await exists(`${claims}/web-warm-1`)) ? ['claim'] : []),
      ];
      if (left.length > 0) throw new Error(`still there: ${left.join(', ')}`);
      return true;
    });

    // The held run now starts from it.
    const runClaim = await until('web-1 claim', () =>
      admin
        .request<V1PersistentVolumeClaim>({ path: `${claims}/web-1-0-workspace` })
        .catch(() => undefined),
    );
    expect(runClaim.spec?.dataSource).toEqual({
      apiGroup: 'snapshot.storage.k8s.io',
      kind: 'VolumeSnapshot',
      name: 'web-warm-1',
    });
    const runPod = await until('web-1 Pod', () => getPod('web-1-0-1').catch(() => undefined));
    expect(runPod.spec?.containers[0]?.command).toEqual(
      expect.arrayContaining(['--source-digest', DIGEST_1]),
    );
    const started = await until('web-1 source recorded', async () => {
      const run = await getRun('web-1');
      return run.status?.workspaceSource ? run : undefined;
    });
    expect(started.status?.workspaceSource).toEqual({
      type: 'VolumeSnapshot',
      volumeSnapshot: 'web-warm-1',
      digest: DIGEST_1,
      commit: COMMIT_1,
    });
    const events = await admin.request<{ items: { reason: string; type: string }[] }>({
      path: path.events,
    });
    const reasons = events.items.map((event) => `${event.type}:${event.reason}`);
    expect(reasons).toEqual(
      expect.arrayContaining(['Normal:WarmUpStarted', 'Normal:WarmUpSucceeded']),
    );
  });

  it('rebuilds on a config change, and collects the superseded snapshot once no run needs it', async () => {
    const workflow = await getWorkflow('web');
    await admin.request({
      method: 'PATCH',
      path: path.workflows('web'),
      patchType: 'merge',
      body: { spec: { workflow: text('npm ci && make') } },
    });
    const pod = await until('the second warm-up Pod', () =>
      getPod('web-warm-2').catch(() => undefined),
    );
    expect(pod.spec?.containers[0]?.command).not.toContain('--unless-commit');
    await endPod('web-warm-2', 'Succeeded', prepared(DIGEST_2, COMMIT_2));
    await until('the second snapshot', () =>
      admin.request({ path: `${snapshots}/web-warm-2` }).catch(() => undefined),
    );
    await markReady('web-warm-2');
    const warm = await until('status.warm moved on', async () => {
      const value = await warmOf('web');
      return value?.snapshot === 'web-warm-2' ? value : undefined;
    });
    expect(warm).toMatchObject({ digest: DIGEST_2, commit: COMMIT_2, build: 2 });
    expect(warm.configDigest).not.toBe(workflow.status?.warm?.configDigest);
    // web-1 (unfinished) started from web-warm-1: it stays, past the grace, while web-1 is there.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await exists(`${snapshots}/web-warm-1`)).toBe(true);
    // Playing the provisioner (the claim restored: Bound) and the run's end (deleted): nothing
    // needs web-warm-1 any more.
    await admin.request({
      method: 'PATCH',
      path: `${claims}/web-1-0-workspace/status`,
      patchType: 'merge',
      body: { status: { phase: 'Bound' } },
    });
    await admin.request({ method: 'DELETE', path: path.issueRuns('web-1') });
    await until(
      'web-warm-1 collected',
      async () => ((await exists(`${snapshots}/web-warm-1`)) ? undefined : true),
      60_000,
    );
    expect(await exists(`${snapshots}/web-warm-2`)).toBe(true);
  });

  it('a failed warm-up: WarmUpFailed; runs held (fallback wait), or started clean (fallback clean)', async () => {
    await createWarmWorkflow('cold', 'npm ci');
    await until('the warm-up Pod', () => getPod('cold-warm-1').catch(() => undefined));
    await endPod('cold-warm-1', 'Failed', {
      outcome: 'failed',
      errorCode: 'workspace_clone_failed',
      error: 'git clone failed: repository not found',
    });
    const warm = await until('WarmUpFailed', async () => {
      const value = await warmOf('cold');
      return value?.reason === 'WarmUpFailed' ? value : undefined;
    });
    expect(warm.message).toBe(
      'warm-up cold-warm-1 failed: workspace_clone_failed: git clone failed: repository not found',
    );
    expect(warm.snapshot).toBeUndefined();
    await createRun('cold-1', 'cold');
    const held = await until('cold-1 held', async () => {
      const run = await getRun('cold-1');
      return run.status?.reason === 'WarmWorkspaceNotReady' ? run : undefined;
    });
    expect(held.status?.message).toContain(
      'its last warm-up failed (WarmUpFailed: warm-up cold-warm-1 failed',
    );
    const events = await admin.request<{ items: { reason: string; type: string }[] }>({
      path: path.events,
    });
    expect(events.items.map((event) => `${event.type}:${event.reason}`)).toContain(
      'Warning:WarmUpFailed',
    );

    await admin.request({
      method: 'PATCH',
      path: path.workflows('cold'),
      patchType: 'merge',
      body: { spec: { workspace: { warm: { fallback: 'clean' } } } },
    });
    const runClaim = await until('cold-1 claim', () =>
      admin
        .request<V1PersistentVolumeClaim>({ path: `${claims}/cold-1-0-workspace` })
        .catch(() => undefined),
    );
    expect(runClaim.spec?.dataSource).toBeUndefined();
    const started = await until('cold-1 started clean', async () => {
      const run = await getRun('cold-1');
      return run.status?.workspaceSource ? run : undefined;
    });
    expect(started.status?.workspaceSource).toEqual({ type: 'Clean' });
  });

  it('refuses an after_create that depends on the issue: WarmWorkspaceUnsupported, no warm-up', async () => {
    await createWarmWorkflow('perissue', 'echo {{ issue.identifier }} > id.txt');
    const warm = await until('WarmWorkspaceUnsupported', async () => {
      const value = await warmOf('perissue');
      return value?.reason === 'WarmWorkspaceUnsupported' ? value : undefined;
    });
    expect(warm.message).toMatch(/hooks\.after_create depends on the issue/);
    expect(await exists(`${path.pods}/perissue-warm-1`)).toBe(false);
  });

  it("a snapshot of another namespace is not the run's: Stalled SnapshotNotFound, no claim", async () => {
    // Same name, ready, in a namespace the run is not in: a claim could not be restored from it.
    await admin.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { metadata: { name: 'elsewhere' } },
    });
    await admin.request({
      method: 'POST',
      path: '/apis/snapshot.storage.k8s.io/v1/namespaces/elsewhere/volumesnapshots',
      body: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        metadata: { name: 'theirs' },
        spec: { volumeSnapshotClassName: 'csi-snap', source: { persistentVolumeClaimName: 'x' } },
      },
    });
    await admin.request({
      method: 'PATCH',
      path: '/apis/snapshot.storage.k8s.io/v1/namespaces/elsewhere/volumesnapshots/theirs/status',
      patchType: 'merge',
      body: { status: { readyToUse: true, restoreSize: '1Gi' } },
    });
    await createWorkflowOf('borrower', {
      workflow: text('true', false),
      podTemplate,
      workspace: {
        volumeClaimTemplate: claimTemplate,
        source: { volumeSnapshot: { name: 'theirs' }, digest: DIGEST_1 },
      },
    });
    await createRun('borrower-1', 'borrower');
    const run = await until('borrower-1 Stalled SnapshotNotFound', async () => {
      const value = await getRun('borrower-1');
      return value.status?.reason === 'SnapshotNotFound' ? value : undefined;
    });
    expect(run.status?.message).toContain(`in namespace ${NAMESPACE}`);
    expect(await exists(`${claims}/borrower-1-0-workspace`)).toBe(false);
    expect(await exists(`${path.pods}/borrower-1-0-1`)).toBe(false);
  });
});
