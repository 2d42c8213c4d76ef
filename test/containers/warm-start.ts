// A Workflow that keeps a warm workspace (docs/snapshots.md#warm-workspaces), through the
// controller, on the real node with real CSI snapshots (csi-stack.ts): the warm controller runs
// the warm-up Pod (`lorenz runner --prepare`: after_create into .lorenz-source/, digested),
// snapshots its claim and records the digest in the Workflow's status; dispatched issues then
// start from that snapshot, the setup's marker there, after_create not run again, the digest
// checked. Declared inside csi-snapshots.test.ts's describe, on its node, which has the
// operator's CRDs and RBAC installed.
import { beforeAll, describe, expect, it } from 'vitest';
import { until } from '../integration/operator-harness.js';
import { scriptedWorkflowText } from '../support/scripted-workflow.js';
import { namespaceOnNode } from './node-controller.js';
import type { RealNode } from './real-node-env.js';
import type { ContainerImages } from './real-node-controller.js';

const NAMESPACE = 'lorenz-warm';
const WORKFLOW = 'warmed';

/**
 * after_create is the repository's set-up here: it runs once, in the warm-up, and leaves its
 * marker and a tool it built; each run counts its runs of after_create in `after-create-runs`.
 * before_run proves the run's workspace is the warm one: the marker, the tool, one line only.
 */
const HOOKS = {
  timeout_ms: 60000,
  after_create: [
    'echo set up once > setup-marker',
    'mkdir -p bin',
    "printf '#!/bin/sh\\necho tool built by the setup\\n' > bin/tool",
    'chmod 0755 bin/tool',
    'echo ran >> after-create-runs',
  ].join(' && '),
  before_run: 'cat setup-marker && ./bin/tool && wc -l < after-create-runs',
};

export function describeWarmStartsOnRealNode(
  realNode: () => RealNode,
  images: () => ContainerImages,
  storage: { storageClass: string },
): void {
  describe('a Workflow with workspace.warm: issues start from its warm snapshot', () => {
    let node: RealNode;
    const { enter, startController, ...runs } = namespaceOnNode(NAMESPACE, images);
    const getWorkflow = () => runs.getWorkflow(WORKFLOW);
    const createRun = (name: string) => runs.createRun(name, WORKFLOW);
    const finished = (name: string) => runs.finished(name, 240_000);

    beforeAll(async () => {
      node = realNode();
      await enter(node);
      await runs.createWorkflow(WORKFLOW, {
        workflow: scriptedWorkflowText('node /lorenz-bin/scripted-agent.mjs', { hooks: HOOKS }),
        podTemplate: { spec: { containers: [{ name: 'agent', image: images().agent }] } },
        workspace: {
          volumeClaimTemplate: {
            spec: {
              storageClassName: storage.storageClass,
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: '10Mi' } },
            },
          },
          warm: {},
        },
      });
      await startController(node);
    }, 300_000);

    it('warms up once, then each issue starts from the snapshot: the digest checked, the setup there, after_create not run again', async () => {
      // The first issue is created while the warm-up runs: it waits for the snapshot (the
      // default fallback), then starts from it like the second.
      await createRun('warm-first');
      const warmed = await until(
        'the Workflow to record a ready warm snapshot',
        async () => {
          const workflow = await getWorkflow();
          // Thrown, not returned: a timeout then says where the warm-up stood.
          if (!workflow.status?.warm?.snapshot) {
            const pods = node.kubectl([
              '-n',
              NAMESPACE,
              'get',
              'pods,pvc,volumesnapshots',
              '-o',
              'wide',
            ]);
            throw new Error(
              `status.warm ${JSON.stringify(workflow.status?.warm ?? null)}\n${pods}`,
            );
          }
          return workflow;
        },
        240_000,
      );
      const warm = warmed.status?.warm;
      expect(warm?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(warm?.reason).toBe('WarmUpSucceeded');
      const snapshot = warm?.snapshot ?? '';
      expect(
        node.kubectl([
          '-n',
          NAMESPACE,
          'get',
          'volumesnapshot',
          snapshot,
          '-o',
          'jsonpath={.status.readyToUse}',
        ]),
      ).toBe('true');

      await createRun('warm-second');
      for (const name of ['warm-first', 'warm-second']) {
        const run = await finished(name);
        expect(run.status?.phase, JSON.stringify(run.status)).toBe('Succeeded');
        expect(run.status?.workspaceSource).toMatchObject({
          type: 'VolumeSnapshot',
          volumeSnapshot: snapshot,
          digest: warm?.digest,
        });
        const hooks = (run.status?.hooks ?? []).map((hook) => `${hook.name}:${hook.status}`);
        expect(hooks, name).toEqual(['before_run:completed']);
        const beforeRun = run.status?.hooks?.find((hook) => hook.name === 'before_run');
        // after_create ran once, in the warm-up, and not in either run.
        expect(beforeRun?.output?.trim()).toBe('set up once\ntool built by the setup\n1');
        // How long its start took is recorded: Pod created → the agent's first turn.
        expect(run.status?.slots?.[0]?.firstTurnAfterMs).toBeGreaterThan(0);
        const claim = JSON.parse(
          node.kubectl(['-n', NAMESPACE, 'get', 'pvc', `${name}-0-workspace`, '-o', 'json']),
        ) as { spec: { dataSource?: { kind?: string; name?: string } } };
        expect(claim.spec.dataSource).toMatchObject({ kind: 'VolumeSnapshot', name: snapshot });
      }

      // The warm-up's own Pod and claim are gone once its snapshot is recorded; the snapshot stays.
      await until('the warm-up Pod and claim to be deleted', async () => {
        const left = node.kubectl(['-n', NAMESPACE, 'get', 'pods,pvc', '-o', 'name']);
        return left.includes(`${WORKFLOW}-warm-`) ? undefined : true;
      });
    }, 600_000);
  });
}
