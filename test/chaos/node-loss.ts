// Scenario: the node goes dark while its run Pods work (the node process and every container
// process SIGKILLed at once) and a replacement node joins. kube-controller-manager marks the
// node NotReady, taints it unreachable and deletes its Pods; the deletions are never carried
// out (no kubelet), so the Pods stay, Running, forever. Each run must end its attempt
// NodeLost, retry on the new node per spec.retries, and finish: nothing left Running.
import type { IssueRun } from '../../src/api/index.js';
import type { ChaosEnv } from './env.js';
import { NAMESPACE } from './env.js';
import { takeLedger, type RunLedger } from './ledger.js';
import { createChaosWorkflow, createRuns, sleep } from './workload.js';

export interface NodeLossFigures extends RunLedger {
  /** Runs whose status was seen saying an attempt ended NodeLost (polled every 0.5 s). */
  nodeLostSeen: number;
  /** Runs that went on to a second attempt. */
  retried: number;
  /** From the loss until every lost attempt had ended (NodeLost). */
  allLostAttemptsEndedMs: number;
  /** From the loss until every run was Finished. */
  allFinishedMs: number;
}

const runsPath = `/apis/lorenz.dev/v1alpha1/namespaces/${NAMESPACE}/issueruns`;

export async function nodeLoss(
  env: ChaosEnv,
  options: { runs: number; timeoutMs: number },
): Promise<NodeLossFigures> {
  const first = await env.startNode('chaos-node-1');
  // A 14 s hook timeout (the 10 s hook and a margin): a grace of 43 s instead of 55 s, so the
  // lost attempts end 12 s sooner; what the scenario checks is unchanged.
  await createChaosWorkflow(env.admin, 'chaos-node', env.podNode, {
    hookSeconds: 10,
    hooksTimeoutMs: 14_000,
  });
  const replica = await env.startReplica('a', { leaderElect: true });
  const names = await createRuns(env.admin, 'chaos-node', 'lost', options.runs, { retries: 1 });
  const wanted = new Set(names);
  const list = async () =>
    (await env.admin.request<{ items: IssueRun[] }>({ path: runsPath })).items.filter((run) =>
      wanted.has(run.metadata.name ?? ''),
    );
  // Mid-run: every run's Pod is running its hooks. A read refused for a moment (429 while the
  // apiserver's cache of IssueRuns initializes, seen under load) is read again.
  const deadline = Date.now() + 120_000;
  const running = async () =>
    (await list().catch(() => [] as IssueRun[])).filter((run) => run.status?.phase === 'Running');
  while ((await running()).length < names.length) {
    if (Date.now() > deadline) throw new Error('the runs never all ran on the first node');
    await sleep(500);
  }
  await sleep(2_000);
  await first.kill();
  const lostAt = Date.now();
  const second = await env.startNode('chaos-node-2');

  const lost = new Set<string>();
  const said = new Set<string>();
  let allLostAttemptsEndedMs = Number.NaN;
  let allFinishedMs = Number.NaN;
  while (Date.now() - lostAt < options.timeoutMs) {
    const runs = await list().catch(() => [] as IssueRun[]);
    for (const run of runs) {
      const text = `${run.status?.reason ?? ''} ${(run.status?.slots ?? []).map((slot) => `${slot.reason ?? ''} ${slot.message ?? ''}`).join(' ')}`;
      if (/NodeLost/.test(text)) said.add(run.metadata.name ?? '');
      if (/NodeLost/.test(text) || (run.status?.attempt ?? 1) > 1)
        lost.add(run.metadata.name ?? '');
    }
    if (lost.size === names.length && Number.isNaN(allLostAttemptsEndedMs))
      allLostAttemptsEndedMs = Date.now() - lostAt;
    const finished = runs.filter((run) =>
      run.status?.conditions?.some((c) => c.type === 'Finished' && c.status === 'True'),
    );
    if (finished.length === names.length) {
      allFinishedMs = Date.now() - lostAt;
      break;
    }
    await sleep(500);
  }
  await replica.stop();
  await second.stop();
  const ledger = await takeLedger(env.admin, env.auditLog, names, { failuresExpected: true });
  return {
    ...ledger,
    nodeLostSeen: said.size,
    retried: (await list()).filter((run) => (run.status?.attempt ?? 1) > 1).length,
    allLostAttemptsEndedMs,
    allFinishedMs,
  };
}
