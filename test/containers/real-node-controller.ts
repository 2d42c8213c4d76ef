// IssueRuns through the controller (in-process, as its ServiceAccount, as in the integration
// tier) with their run Pods on the real node: what the runtime reports (the kernel's OOM
// kill, a pull that fails) becomes the run's reason, and a workspace survives an attempt
// only on a PersistentVolumeClaim (a new attempt is a new Pod: its emptyDir is new too).
// Declared inside real-node.test.ts's describe, on its node: one node for the tier (its
// start, images imported into a fresh containerd and the wait for Ready, costs a minute or
// two on this machine).
import { chownSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { IssueRun } from '../../src/api/index.js';
import { DEFAULT_RUN_AS_USER } from '../../src/controller/issuerun/pod-builder.js';
import { workspaceClaimName } from '../../src/controller/shared/object-names.js';
import { installOperator } from '../integration/operator-harness.js';
import { scriptedWorkflowText } from '../support/scripted-workflow.js';
import { namespaceOnNode } from './node-controller.js';
import type { RealNode } from './real-node-env.js';

const NAMESPACE = 'lorenz-runs';
/** The controller's grace for a failing pull (120 s by default): the verdict comes sooner. */
const IMAGE_PULL_GRACE_MS = 6000;
/** A registry on a closed local port: the pull fails at once, nothing leaves the machine. */
const UNPULLABLE_IMAGE = '127.0.0.1:1/lorenz/missing:1.0.0';

interface WorkflowShape {
  hooks: Record<string, string>;
  memoryLimit?: string;
  image?: string;
  workspace?: object;
}

/** WORKFLOW.md with the scripted agent the operator image ships (no model, no key). */
const workflowText = (hooks: Record<string, string>): string =>
  scriptedWorkflowText('node /lorenz-bin/scripted-agent.mjs', {
    maxRetryBackoffMs: 1000,
    hooks: { timeout_ms: 60000, ...hooks },
  });

// The first attempt finds no file, writes one and fails; a later one says whether it is there.
const WRITE_THEN_FAIL = `if [ -f from-attempt-1 ]; then echo "found: $(cat from-attempt-1)"; else echo 'not found'; echo kept > from-attempt-1; exit 1; fi`;

/** The images hack/images.sh built (the tier's `inject('containerImages')`, when available). */
export interface ContainerImages {
  operator: string;
  agent: string;
}

/**
 * The controller's cases, on `realNode()`: a node whose control plane runs the
 * persistentvolume-binder-controller (a static PersistentVolume for the PVC workspace).
 */
export function describeControllerOnRealNode(
  realNode: () => RealNode,
  images: () => ContainerImages,
): void {
  describe('IssueRuns through the controller', () => {
    let node: RealNode;
    const { enter, startController, ...runs } = namespaceOnNode(NAMESPACE, images);

    const createWorkflow = (name: string, shape: WorkflowShape) =>
      runs.createWorkflow(name, {
        workflow: workflowText(shape.hooks),
        podTemplate: {
          spec: {
            containers: [
              {
                name: 'agent',
                image: shape.image ?? images().agent,
                ...(shape.memoryLimit
                  ? { resources: { limits: { memory: shape.memoryLimit } } }
                  : {}),
              },
            ],
          },
        },
        ...(shape.workspace ? { workspace: shape.workspace } : {}),
      });

    async function runToEnd(name: string, workflow: string, spec: object = {}): Promise<IssueRun> {
      await runs.createRun(name, workflow, spec);
      return runs.finished(name, 120_000);
    }

    const hook = (run: IssueRun, name: string) =>
      run.status?.hooks?.find((entry) => entry.name === name);

    beforeAll(async () => {
      node = realNode();
      await enter(node);
      await installOperator(node.cp);
      await startController(node, { podStatus: { imagePullGraceMs: IMAGE_PULL_GRACE_MS } });
    }, 120_000);

    it('ends a run whose hook outgrows the podTemplate memory limit OOMKilled, naming the container', async () => {
      await createWorkflow('oom', {
        // The runner (node) holds ≈ 80 MiB of it; the hook takes the rest and then some.
        memoryLimit: '256Mi',
        hooks: {
          before_run: `node -e 'const held = []; for (;;) held.push(Buffer.alloc(1 << 20, 1));'`,
        },
      });
      const run = await runToEnd('oom-1', 'oom');
      expect(run.status?.phase, JSON.stringify(run.status)).toBe('Failed');
      expect(run.status?.reason).toBe('OOMKilled');
      expect(run.status?.message).toMatch(/container agent was OOMKilled/);
      expect(run.status?.slots?.[0]).toMatchObject({ reason: 'OOMKilled', podName: 'oom-1-0-1' });
      const pod = node.getPod(NAMESPACE, 'oom-1-0-1');
      const agent = pod.status?.containerStatuses?.find((status) => status.name === 'agent');
      expect(agent?.state?.terminated?.reason).toBe('OOMKilled');
      // What the kernel killed: the hook (the cgroup's biggest process), not the runner, which
      // recorded it and ended the attempt; the runtime still calls the container OOMKilled.
      expect(hook(run, 'before_run')).toMatchObject({ status: 'failed', exitCode: null });
      expect(hook(run, 'before_run')?.error).toMatch(/SIGKILL/);
    });

    it('ends a run whose podTemplate image cannot be pulled ImagePullFailed, with the runtime message', async () => {
      await createWorkflow('no-image', { image: UNPULLABLE_IMAGE, hooks: {} });
      const started = Date.now();
      const run = await runToEnd('no-image-1', 'no-image');
      expect(run.status?.phase, JSON.stringify(run.status)).toBe('Failed');
      expect(run.status?.reason).toBe('ImagePullFailed');
      expect(run.status?.message).toMatch(/^container agent: (ErrImagePull|ImagePullBackOff): /);
      expect(run.status?.message).toContain('127.0.0.1:1');
      // Not before the grace: the kubelet retries a pull, and so does the verdict wait. The
      // grace runs from the Pod's creationTimestamp, whole seconds: up to 1 s of it is gone
      // by the time the Pod is made.
      expect(Date.now() - started).toBeGreaterThanOrEqual(IMAGE_PULL_GRACE_MS - 1000);
    });

    it('does not keep an emptyDir workspace across attempts: each attempt is a new Pod', async () => {
      await createWorkflow('scratch', { hooks: { before_run: WRITE_THEN_FAIL } });
      const run = await runToEnd('scratch-1', 'scratch', { retries: 1 });
      expect(run.status?.phase, JSON.stringify(run.status)).toBe('Failed');
      expect(run.status?.attempt).toBe(2);
      expect(run.status?.reason).toBe('HookFailed');
      // Attempt 2's hook history: its new emptyDir held nothing of attempt 1's.
      expect(hook(run, 'before_run')).toMatchObject({ status: 'failed', output: 'not found' });
    });

    it('keeps a PersistentVolumeClaim workspace across attempts: the retry finds the file', async () => {
      const claim = workspaceClaimName('kept-1', 0);
      // A static volume on this machine, bound to the claim the controller will make. Its
      // directory belongs to the run Pods' user: fsGroup does not reach a hostPath volume.
      const hostDir = join(node.dir, 'pv-kept-1');
      mkdirSync(hostDir, { mode: 0o755 });
      chownSync(hostDir, DEFAULT_RUN_AS_USER, DEFAULT_RUN_AS_USER);
      node.kubectl(
        ['apply', '-f', '-'],
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'PersistentVolume',
          metadata: { name: 'pv-kept-1' },
          spec: {
            capacity: { storage: '1Gi' },
            accessModes: ['ReadWriteOnce'],
            storageClassName: '',
            persistentVolumeReclaimPolicy: 'Retain',
            claimRef: { namespace: NAMESPACE, name: claim },
            hostPath: { path: hostDir, type: 'Directory' },
          },
        }),
      );
      await createWorkflow('kept', {
        hooks: { before_run: WRITE_THEN_FAIL },
        workspace: {
          volumeClaimTemplate: {
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: '',
              resources: { requests: { storage: '10Mi' } },
            },
          },
        },
      });
      const run = await runToEnd('kept-1', 'kept', { retries: 1 });
      expect(run.status?.phase, JSON.stringify(run.status)).toBe('Succeeded');
      expect(run.status?.attempt).toBe(2);
      expect(hook(run, 'before_run')).toMatchObject({ status: 'completed', output: 'found: kept' });
      // The claim is the controller's, bound to the static volume: the runs wrote there.
      const bound = JSON.parse(
        node.kubectl(['-n', NAMESPACE, 'get', 'pvc', claim, '-o', 'json']),
      ) as { spec: { volumeName?: string }; status: { phase?: string } };
      expect(bound).toMatchObject({
        spec: { volumeName: 'pv-kept-1' },
        status: { phase: 'Bound' },
      });
      // And the file is on the volume, outside any Pod.
      const files = readdirSync(hostDir, { recursive: true, encoding: 'utf8' });
      expect(files.some((file) => file.endsWith('from-attempt-1'))).toBe(true);
    });
  });
}
