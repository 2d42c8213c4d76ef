// IssueRuns whose workspace starts from a VolumeSnapshot (docs/snapshots.md), through the
// controller, on the real node with real CSI snapshots (csi-stack.ts): a prepared tree is
// written into a claim, its digest taken by `lorenz workspace digest` in the operator image,
// the claim snapshotted; a run then starts from it with the setup's marker there, no
// after_create, and the digest checked; a run given another digest fails before any hook; a
// snapshot that is not there (not yet, or deleted since) holds a run Stalled. Declared inside csi-snapshots.test.ts's
// describe, on its node, which has the operator's CRDs and RBAC installed.
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RUN_AS_USER } from '../../src/controller/issuerun/pod-builder.js';
import { until } from '../integration/operator-harness.js';
import { scriptedWorkflowText } from '../support/scripted-workflow.js';
import { namespaceOnNode } from './node-controller.js';
import type { RealNode } from './real-node-env.js';
import { RESTRICTED_CONTAINER, restrictedPod } from './restricted-pod.js';
import type { ContainerImages } from './real-node-controller.js';

const NAMESPACE = 'lorenz-snapshots';
const PREPARED_CLAIM = 'prepared';
const SNAPSHOT = 'prepared-snap';
const OTHER_DIGEST = `sha256:${'0'.repeat(64)}`;

/** What a warm-up would leave: the setup's marker, a tool it built, a link, in .lorenz-source/. */
const PREPARE = `set -e
mkdir -p /workspace/.lorenz-source/bin
cd /workspace/.lorenz-source
echo 'set up once' > setup-marker
printf '#!/bin/sh\\necho tool built by the setup\\n' > bin/tool
chmod 0755 bin/tool
ln -s bin/tool tool
`;

/** The hooks the runs have: after_create must not run on a restored workspace; before_run must. */
const HOOKS = {
  timeout_ms: 60000,
  after_create: 'echo after_create ran > ran-after-create',
  before_run: 'cat setup-marker && test ! -e ran-after-create && ./tool',
};

export function describeSnapshotStartsOnRealNode(
  realNode: () => RealNode,
  images: () => ContainerImages,
  storage: { storageClass: string; snapshotClass: string },
): void {
  describe('IssueRuns that start from a VolumeSnapshot, through the controller', () => {
    let node: RealNode;
    const { enter, startController, getRun, createWorkflow, ...runs } = namespaceOnNode(
      NAMESPACE,
      images,
    );
    let digest = '';
    const apply = (object: object) => node.kubectl(['apply', '-f', '-'], JSON.stringify(object));
    const claimTemplate = {
      spec: {
        storageClassName: storage.storageClass,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '10Mi' } },
      },
    };
    const createRun = (name: string, spec: object = {}) => runs.createRun(name, 'warm', spec);
    const finished = (name: string) => runs.finished(name, 180_000);

    /** A Pod on the prepared claim: the agent image writes the tree, the operator image digests it. */
    async function prepareAndDigest(): Promise<string> {
      apply({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: PREPARED_CLAIM, namespace: NAMESPACE },
        spec: claimTemplate.spec,
      });
      const restricted = RESTRICTED_CONTAINER;
      const mounts = [{ name: 'workspace', mountPath: '/workspace' }];
      // As run Pods are: the same user and group, so the restored root already matches.
      const podSecurity = { fsGroup: DEFAULT_RUN_AS_USER, fsGroupChangePolicy: 'OnRootMismatch' };
      apply(
        restrictedPod('prepare', NAMESPACE, podSecurity, {
          initContainers: [
            {
              name: 'setup',
              image: images().agent,
              command: ['sh', '-c', PREPARE],
              securityContext: restricted,
              volumeMounts: mounts,
            },
          ],
          containers: [
            {
              name: 'digest',
              image: images().operator,
              args: ['workspace', 'digest', '/workspace/.lorenz-source'],
              securityContext: restricted,
              volumeMounts: mounts,
            },
          ],
          volumes: [{ name: 'workspace', persistentVolumeClaim: { claimName: PREPARED_CLAIM } }],
        }),
      );
      await node.waitForPod(NAMESPACE, 'prepare', (pod) => pod.status?.phase === 'Succeeded', 120);
      return node.kubectl(['-n', NAMESPACE, 'logs', 'prepare', '-c', 'digest']).trim();
    }

    beforeAll(async () => {
      node = realNode();
      await enter(node);
      digest = await prepareAndDigest();
      apply({
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        metadata: { name: SNAPSHOT, namespace: NAMESPACE },
        spec: {
          volumeSnapshotClassName: storage.snapshotClass,
          source: { persistentVolumeClaimName: PREPARED_CLAIM },
        },
      });
      await until(`VolumeSnapshot ${SNAPSHOT} readyToUse`, async () => {
        const ready = node.kubectl([
          '-n',
          NAMESPACE,
          'get',
          'volumesnapshot',
          SNAPSHOT,
          '-o',
          'jsonpath={.status.readyToUse}',
        ]);
        return ready === 'true' ? true : undefined;
      });
      await createWorkflow('warm', {
        workflow: scriptedWorkflowText('node /lorenz-bin/scripted-agent.mjs', { hooks: HOOKS }),
        podTemplate: { spec: { containers: [{ name: 'agent', image: images().agent }] } },
        workspace: {
          volumeClaimTemplate: claimTemplate,
          source: { volumeSnapshot: { name: SNAPSHOT }, digest },
        },
      });
      await startController(node);
    }, 300_000);

    it('starts from the snapshot: the digest checked, the setup there, after_create not run, before_run run', async () => {
      expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      await createRun('warm-1');
      const run = await finished('warm-1');
      expect(run.status?.phase, JSON.stringify(run.status)).toBe('Succeeded');
      expect(run.status?.workspaceSource).toEqual({
        type: 'VolumeSnapshot',
        volumeSnapshot: SNAPSHOT,
        digest,
      });
      const hooks = (run.status?.hooks ?? []).map((hook) => `${hook.name}:${hook.status}`);
      expect(hooks).toEqual(['before_run:completed']);
      const beforeRun = run.status?.hooks?.find((hook) => hook.name === 'before_run');
      expect(beforeRun?.output).toBe('set up once\ntool built by the setup');
      // The claim was restored from the snapshot; the snapshot itself is untouched.
      const claim = JSON.parse(
        node.kubectl(['-n', NAMESPACE, 'get', 'pvc', 'warm-1-0-workspace', '-o', 'json']),
      ) as { spec: { dataSource?: { kind?: string; name?: string } } };
      expect(claim.spec.dataSource).toMatchObject({ kind: 'VolumeSnapshot', name: SNAPSHOT });
    });

    it('refuses a tree whose digest is not the one given: SnapshotDigestMismatch before any hook', async () => {
      await createRun('other-digest-1', {
        workspace: { source: { volumeSnapshot: { name: SNAPSHOT }, digest: OTHER_DIGEST } },
      });
      const run = await finished('other-digest-1');
      expect(run.status?.phase, JSON.stringify(run.status)).toBe('Failed');
      expect(run.status?.reason).toBe('SnapshotDigestMismatch');
      expect(run.status?.message).toContain(`its snapshot was recorded with ${OTHER_DIGEST}`);
      expect(run.status?.message).toContain(digest);
      expect(run.status?.hooks ?? []).toEqual([]);
    });

    it('holds a run whose snapshot does not exist Stalled SnapshotNotFound, and starts it once it does', async () => {
      await createRun('missing-1', {
        workspace: { source: { volumeSnapshot: { name: 'later-snap' }, digest } },
      });
      await until('missing-1 Stalled SnapshotNotFound', async () => {
        const run = await getRun('missing-1');
        return run.status?.reason === 'SnapshotNotFound' ? run : undefined;
      });
      expect(node.kubectl(['-n', NAMESPACE, 'get', 'pods', '-o', 'name'])).not.toContain(
        'missing-1',
      );
      apply({
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshot',
        metadata: { name: 'later-snap', namespace: NAMESPACE },
        spec: {
          volumeSnapshotClassName: storage.snapshotClass,
          source: { persistentVolumeClaimName: PREPARED_CLAIM },
        },
      });
      const run = await finished('missing-1');
      expect(run.status?.phase, JSON.stringify(run.status)).toBe('Succeeded');
      expect(run.status?.workspaceSource?.volumeSnapshot).toBe('later-snap');
    });

    it('a snapshot deleted: a run restored from it keeps its claim, a new run waits SnapshotNotFound, never starting clean', async () => {
      node.kubectl(['-n', NAMESPACE, 'delete', 'volumesnapshot', SNAPSHOT, '--wait=true']);
      await createRun('after-delete-1');
      await until('after-delete-1 Stalled SnapshotNotFound', async () => {
        const run = await getRun('after-delete-1');
        return run.status?.reason === 'SnapshotNotFound' ? run : undefined;
      });
      const pods = node.kubectl(['-n', NAMESPACE, 'get', 'pods,pvc', '-o', 'name']);
      expect(pods).not.toContain('after-delete-1');
      // warm-1's claim was restored before: a copy, still bound, its workspace still there.
      expect(
        node.kubectl([
          '-n',
          NAMESPACE,
          'get',
          'pvc',
          'warm-1-0-workspace',
          '-o',
          'jsonpath={.status.phase}',
        ]),
      ).toBe('Bound');
    });
  });
}
