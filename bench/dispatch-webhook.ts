// The webhook row of `npm run bench:dispatch` (docs/webhooks.md): an issue of a local board
// moved to Todo, then a signed GitHub `issues` delivery → its run Pod exists, with polling
// every 30 s, so that only the wake can dispatch it this fast. Goal: p99 ≤ 1 s.
//
//   BENCH_PHASES=webhook npm run bench:dispatch      this row alone
//   BENCH_SAMPLES                                    issues moved (20)
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import type { Workflow } from '../src/api/index.js';
import { startController } from '../src/controller/main.js';
import {
  createWebhookSecret,
  deliverGithub,
  podExists,
  printLatencyRow,
  WEBHOOK_SECRET_NAME,
  type Percentile,
  type Say,
} from './dispatch-hooks.js';
import { collection, createNamespace, startBenchCluster, until } from './reconcile-env.js';

const POLL_MS = 30_000;
const GOAL_MS = 1000;

const board = (state: string) => `---\nstatus: ${state}\n---\n# Bench issue\nNothing to do.\n`;

export async function webhookLatency(
  samples: number,
  percentile: Percentile,
  say: Say,
): Promise<void> {
  say('starting the local control plane (webhook phase)');
  const cluster = await startBenchCluster();
  const dir = await mkdtemp(join(tmpdir(), 'lorenz-bench-board-'));
  await chmod(dir, 0o755);
  const ns = 'dispatch-webhook';
  try {
    await createNamespace(cluster.admin, ns);
    await createWebhookSecret(cluster.admin, ns);
    for (let index = 0; index < samples; index += 1) {
      await writeFile(join(dir, `BOARD-${index + 1}.md`), board('Backlog'));
    }
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(cluster.controllerKubeconfig);
    const controller = await startController({
      kubeConfig,
      namespace: ns,
      handleSignals: false,
      identity: 'bench-webhook',
      webhookBindAddress: '127.0.0.1:0',
    });
    const port = controller.webhookPort();
    await cluster.admin.request({
      method: 'POST',
      path: collection.workflows(ns),
      body: {
        apiVersion: 'lorenz.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'wh' },
        spec: {
          workflow: `---\ntracker: { kind: local, path: ${dir} }\nagent: { kind: codex, max_concurrent_agents: ${samples + 1} }\npolling: { interval_ms: ${POLL_MS} }\n---\nWork.`,
          podTemplate: { spec: { containers: [{ name: 'agent', image: 'x' }] } },
          webhooks: { secretRef: { name: WEBHOOK_SECRET_NAME } },
        },
      },
    });
    await until(
      'the first poll',
      async () => {
        const wf = await cluster.admin.request<Workflow>({
          path: `${collection.workflows(ns)}/wh`,
        });
        return wf.status?.dispatch?.lastPollTime ? true : undefined;
      },
      60_000,
    );
    const latencies: number[] = [];
    for (let index = 0; index < samples; index += 1) {
      // Apart by more than the coalescing window, as separate tracker changes would be.
      await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 300));
      const moved = performance.now();
      await writeFile(join(dir, `BOARD-${index + 1}.md`), board('Todo'));
      await deliverGithub(port, { namespace: ns, workflow: 'wh' }, 'issues', `bench-${index}`, {
        action: 'edited',
        issue: { number: index },
      });
      await podExists(cluster.admin, ns, `lorenz.dev/issuerun=wh-board-${index + 1}`);
      latencies.push(performance.now() - moved);
    }
    await controller.stop();
    printLatencyRow(
      'Issue moved to Todo + a webhook delivery → its run Pod exists',
      { label: 'poll interval', value: `${POLL_MS} ms` },
      latencies,
      GOAL_MS,
      percentile,
    );
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
