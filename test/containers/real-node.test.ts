// A run Pod as the controller builds it, on a real node (hack/real-node.sh: kubelet,
// containerd, runc, CNI) attached to the local control plane: Pod Security admission
// `restricted` admits it, the kubelet runs it under the securityContext it carries, and
// what comes back (phase, termination message, `kubectl logs`, OOMKilled, a failed pull)
// is the runtime's own, not the process node's imitation. Then IssueRuns through the
// controller on the same node (real-node-controller.ts).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { realNodeSkipReason, startRealNode, type RealNode } from './real-node-env.js';
import { describeControllerOnRealNode } from './real-node-controller.js';
import { RESTRICTED_CONTAINER, restrictedPod, securityProbeWorkflow } from './restricted-pod.js';
import { buildRunPod, DEFAULT_RUN_AS_USER } from '../../src/controller/issuerun/pod-builder.js';
import { renderRunInputs } from '../../src/controller/issuerun/inputs.js';
import { loadWorkflowText } from '../../src/template/load-workflow.js';
import { normalizeIssue } from '../../src/workflow/issue.js';
import { RUNNER_FLAGS } from '../../src/api/run-pod.js';

const images = inject('containerImages');
const skipReason = realNodeSkipReason(images);
if (skipReason) console.warn(`[containers] skipping the real-node tests: ${skipReason}`);

// Not the dev cluster's node: its own name, address, port, bridge and Pod range.
const NODE = {
  LORENZ_NODE_NAME: 'lorenz-containers-node',
  LORENZ_NODE_IP: '10.89.0.2',
  LORENZ_KUBELET_PORT: '10251',
  LORENZ_BRIDGE: 'lorenz1',
  LORENZ_POD_CIDR: '10.88.1.0/24',
};
const NAMESPACE = 'restricted';

const WORKFLOW = securityProbeWorkflow();

describe.skipIf(skipReason !== '')('a run Pod on the real node', () => {
  let node: RealNode;
  const kubectl = (args: string[], input?: string) => node.kubectl(args, input);
  const waitFor = (name: string, done: (pod: V1Pod) => boolean) =>
    node.waitForPod(NAMESPACE, name, done);
  const agentPod = (name: string, image: string, command: string[], memory?: string) =>
    restrictedPod(
      name,
      NAMESPACE,
      {},
      {
        containers: [
          {
            name: 'agent',
            image,
            command,
            securityContext: RESTRICTED_CONTAINER,
            ...(memory ? { resources: { limits: { memory } } } : {}),
          },
        ],
      },
    );

  beforeAll(async () => {
    // The binder: the controller's cases bind a static PersistentVolume to a run's claim.
    node = await startRealNode({
      identity: NODE,
      extraControllers: ['persistentvolume-binder-controller'],
    });
    await node.createRestrictedNamespace(NAMESPACE);
  }, 600_000);

  afterAll(async () => {
    await node?.stop();
  }, 120_000);

  it("runs the controller's run Pod under restricted admission: non-root, no capabilities, no token; logs and termination message from the runtime", async () => {
    if (!images.available) return;
    const loaded = loadWorkflowText(WORKFLOW, 'real-node');
    const inputs = await renderRunInputs({
      workflowText: WORKFLOW,
      config: loaded.config,
      promptTemplate: loaded.promptTemplate,
      issue: normalizeIssue({ identifier: 'RN-1', title: 'real node', state: 'Todo' }),
      run: { run: 'rn-1', identifier: 'RN-1', attempt: null, ensembleSize: 1 },
    });
    kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'rn-1-inputs', namespace: NAMESPACE },
        data: inputs.files,
      }),
    );
    const pod = buildRunPod({
      run: { name: 'rn-1', namespace: NAMESPACE, uid: 'uid-rn-1' },
      workflowName: 'real-node',
      podTemplate: { spec: { containers: [{ name: 'agent', image: images.agent }] } },
      slot: 0,
      attempt: 1,
      operatorImage: images.operator,
      inputsConfigMap: 'rn-1-inputs',
      inputsDigest: inputs.digest,
      issueState: 'Todo',
      hooksTimeoutMs: 60_000,
      activeDeadlineSeconds: 600,
    });
    // No owner on this bare cluster, and no agent to start: the hooks are what is checked.
    delete pod.metadata!.ownerReferences;
    pod.spec!.containers[0]!.command!.push(`--${RUNNER_FLAGS.noAgent}`);
    kubectl(['create', '-f', '-'], JSON.stringify(pod));
    const name = pod.metadata!.name!;
    const ended = await waitFor(name, (p) =>
      ['Succeeded', 'Failed'].includes(p.status?.phase ?? ''),
    );
    const logs = kubectl(['-n', NAMESPACE, 'logs', name, '-c', 'agent']);
    expect(ended.status?.phase, logs).toBe('Succeeded');
    expect(ended.status?.podIP).toMatch(/^10\.88\.1\./);
    expect(logs).toContain(`uid=${DEFAULT_RUN_AS_USER}`);
    expect(logs).toContain('capeff=0000000000000000');
    expect(logs).toContain('nonewprivs=1');
    expect(logs).toContain('token=absent');
    const agentStatus = ended.status?.containerStatuses?.find((c) => c.name === 'agent');
    expect(agentStatus?.state?.terminated?.message).toMatch(/after_create/);
    expect(agentStatus?.imageID).toMatch(/sha256:/);
  });

  it('ends a container over its memory limit OOMKilled, by the kernel', async () => {
    if (!images.available) return;
    kubectl(
      ['create', '-f', '-'],
      JSON.stringify(
        agentPod(
          'oom',
          images.agent,
          ['node', '-e', 'const held = []; for (;;) held.push(Buffer.alloc(1 << 20, 1));'],
          '64Mi',
        ),
      ),
    );
    const ended = await waitFor('oom', (p) => p.status?.phase === 'Failed');
    const terminated = ended.status?.containerStatuses?.[0]?.state?.terminated;
    expect(terminated?.reason).toBe('OOMKilled');
    expect(terminated?.exitCode).toBe(137);
  });

  it('reports an image it cannot pull as the runtime says (ErrImagePull / ImagePullBackOff)', async () => {
    // A registry on a closed local port: the pull fails at once, and nothing leaves the machine.
    kubectl(
      ['create', '-f', '-'],
      JSON.stringify(agentPod('no-image', '127.0.0.1:1/lorenz/missing:1.0.0', ['true'])),
    );
    const waiting = await waitFor('no-image', (p) =>
      ['ErrImagePull', 'ImagePullBackOff'].includes(
        p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? '',
      ),
    );
    expect(waiting.status?.containerStatuses?.[0]?.state?.waiting?.message).toMatch(
      /127\.0\.0\.1:1/,
    );
  });

  describeControllerOnRealNode(
    () => node,
    () => {
      if (!images.available) throw new Error(`no images: ${images.reason}`);
      return images;
    },
  );
});
