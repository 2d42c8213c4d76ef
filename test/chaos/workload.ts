// The load the faults land on: a Workflow with four hooks that take a moment (so that a
// kill finds Pods mid-run) and the scripted agent, and IssueRuns created all at once.
import type { IssueRun } from '../../src/api/index.js';
import type { KubeClient } from '../../src/controller/runtime/client.js';
import { RUN_POD_PATHS, SCRIPTED_AGENT_FILE } from '../../src/api/run-pod.js';
import { scriptedWorkflowText } from '../support/scripted-workflow.js';
import { NAMESPACE } from './env.js';

const collection = (kind: 'workflows' | 'issueruns') =>
  `/apis/lorenz.dev/v1alpha1/namespaces/${NAMESPACE}/${kind}`;

export interface WorkloadOptions {
  /** attempts after a failed one (the IssueRun's spec.retries). */
  retries?: number;
  /** Seconds before_run sleeps: how long a run Pod stays mid-run. */
  hookSeconds?: number;
  /**
   * hooks.timeout_ms (default 20000). It sets the run Pods' termination grace (2 × the
   * timeout + 15 s), which a lost node's Pods wait out before their attempt ends NodeLost.
   */
  hooksTimeoutMs?: number;
}

export async function createChaosWorkflow(
  admin: KubeClient,
  name: string,
  podNode: string,
  options: WorkloadOptions = {},
): Promise<void> {
  const nodeDir = podNode.slice(0, podNode.lastIndexOf('/'));
  const workflow = scriptedWorkflowText(
    `${podNode} ${RUN_POD_PATHS.runnerBin}/${SCRIPTED_AGENT_FILE}`,
    {
      maxRetryBackoffMs: 1000,
      hooks: {
        timeout_ms: options.hooksTimeoutMs ?? 20000,
        after_create: 'echo created {{ issue.identifier }}',
        before_run: `sleep ${options.hookSeconds ?? 1}; echo ready`,
        after_run: 'echo after',
        before_remove: 'echo bye',
      },
    },
  );
  await admin.request({
    method: 'POST',
    path: collection('workflows'),
    body: {
      apiVersion: 'lorenz.dev/v1alpha1',
      kind: 'Workflow',
      metadata: { name },
      spec: {
        workflow,
        podTemplate: {
          spec: {
            containers: [
              {
                name: 'agent',
                image: 'lorenz-chaos/agent:1',
                env: [{ name: 'PATH', value: `${nodeDir}:/usr/local/bin:/usr/bin:/bin` }],
              },
            ],
          },
        },
      },
    },
  });
}

/** Creates `count` IssueRuns `<prefix>-<i>` of the Workflow, 20 requests in flight. */
export async function createRuns(
  admin: KubeClient,
  workflow: string,
  prefix: string,
  count: number,
  options: WorkloadOptions = {},
): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i + 1}`);
  const queue = [...names];
  const worker = async () => {
    for (let name = queue.shift(); name; name = queue.shift()) {
      await admin.request({
        method: 'POST',
        path: collection('issueruns'),
        body: {
          apiVersion: 'lorenz.dev/v1alpha1',
          kind: 'IssueRun',
          metadata: { name },
          spec: {
            workflowRef: { name: workflow },
            issue: { identifier: name.toUpperCase(), title: `Chaos ${name}`, state: 'Todo' },
            ...(options.retries ? { retries: options.retries } : {}),
          },
        },
      });
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  return names;
}

/** How many of `names` are Finished=True now. */
export async function finishedCount(admin: KubeClient, names: readonly string[]): Promise<number> {
  const wanted = new Set(names);
  const list = await admin.request<{ items: IssueRun[] }>({ path: collection('issueruns') });
  return list.items.filter(
    (run) =>
      wanted.has(run.metadata.name ?? '') &&
      run.status?.conditions?.some((c) => c.type === 'Finished' && c.status === 'True'),
  ).length;
}

/** Waits until every run is Finished, or `timeoutMs` passes; resolves with the time taken. */
export async function waitFinished(
  admin: KubeClient,
  names: readonly string[],
  timeoutMs: number,
): Promise<{ allFinished: boolean; ms: number }> {
  const started = Date.now();
  for (;;) {
    const done = await finishedCount(admin, names).catch(() => -1);
    if (done === names.length) return { allFinished: true, ms: Date.now() - started };
    if (Date.now() - started > timeoutMs) return { allFinished: false, ms: Date.now() - started };
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const between = (low: number, high: number) => low + Math.random() * (high - low);
