// The webhook row of `npm run bench:dispatch` (docs/webhooks.md): an issue of a local board
// moved to Todo, then a signed GitHub `issues` delivery → its run Pod exists, with polling
// every 30 s, so that only the wake can dispatch it this fast. Goal: p99 ≤ 1 s.
//
//   BENCH_PHASES=webhook npm run bench:dispatch      this row alone
//   BENCH_SAMPLES                                    issues moved (20)
import { createHmac } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import type { Workflow } from '../src/api/index.js';
import { startController } from '../src/controller/main.js';
import { collection, createNamespace, startBenchCluster, until } from './reconcile-env.js';

const SECRET = 'bench-webhook-secret';
const POLL_MS = 30_000;
const GOAL_MS = 1000;

const board = (state: string) => `---\nstatus: ${state}\n---\n# Bench issue\nNothing to do.\n`;

/** Every 20 ms (the shared `until` probes every 250 ms, too coarse for a 1 s goal). */
async function podExists(
  admin: Awaited<ReturnType<typeof startBenchCluster>>['admin'],
  ns: string,
  run: string,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const pods = await admin.request<{ items: unknown[] }>({
      path: `/api/v1/namespaces/${ns}/pods`,
      query: { labelSelector: `lorenz.dev/issuerun=${run}` },
    });
    if (pods.items.length > 0) return;
    if (Date.now() > deadline) throw new Error(`no Pod for ${run} within 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function webhookLatency(
  samples: number,
  percentile: (values: number[], p: number) => number,
  say: (line: string) => void,
): Promise<void> {
  say('starting the local control plane (webhook phase)');
  const cluster = await startBenchCluster();
  const dir = await mkdtemp(join(tmpdir(), 'lorenz-bench-board-'));
  await chmod(dir, 0o755);
  const ns = 'dispatch-webhook';
  try {
    await createNamespace(cluster.admin, ns);
    await cluster.admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/secrets`,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'hooks' },
        stringData: { webhook_secret: SECRET },
      },
    });
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
          webhooks: { secretRef: { name: 'hooks' } },
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
      const body = JSON.stringify({ action: 'edited', issue: { number: index } });
      const response = await fetch(`http://127.0.0.1:${port}/webhooks/${ns}/wh/github`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'issues',
          'x-github-delivery': `bench-${index}`,
          'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
        },
        body,
      });
      if (response.status !== 202) throw new Error(`delivery answered ${response.status}`);
      await podExists(cluster.admin, ns, `wh-board-${index + 1}`);
      latencies.push(performance.now() - moved);
    }
    await controller.stop();
    console.log('\n## Issue moved to Todo + a webhook delivery → its run Pod exists\n');
    console.log('| poll interval | samples | p50 | p99 | goal (p99) |');
    console.log('|---:|---:|---:|---:|---:|');
    console.log(
      `| ${POLL_MS} ms | ${samples} | ${percentile(latencies, 50).toFixed(0)} ms | ${percentile(latencies, 99).toFixed(0)} ms | ≤ ${GOAL_MS} ms |`,
    );
    console.log('\n(the probe lists Pods every 20 ms, so figures are up to 20 ms high)');
  } finally {
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
