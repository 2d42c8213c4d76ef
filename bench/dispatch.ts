// `npm run bench:dispatch`: the orchestrator against issue 11's targets. A benchmark, not a
// test: it prints figures beside their targets and never fails on them.
//
//   1. tracker requests per poll for 1, 100 and 1000 candidates, against the Linear and
//      GitHub stand-ins the unit tests use (goal: pages, not per-issue calls; an unchanged
//      GitHub poll costs no rate limit);
//   2. controller CPU per poll at 1000 issues (the dispatch policy and the poll's I/O plan);
//   3. issue enters Todo → its Pod exists, p50/p99 against the poll interval, on the local
//      control plane (goal ≤ interval + 1 s);
//   4. the same with webhooks on and polling every 30 s: moved to Todo + a signed delivery →
//      its Pod exists (goal p99 ≤ 1 s; bench/dispatch-webhook.ts);
//   5. review submitted + a signed delivery → the next attempt's Pod exists (goal p99 ≤ 2 s),
//      and code host requests per idle pull request per hour (goal: none beyond 304s;
//      bench/dispatch-review.ts: phases review and review-idle).
//
//   BENCH_SAMPLES      issues moved to Todo for the latency figure          (20)
//   BENCH_INTERVAL_MS  polling.interval_ms of that Workflow                 (2000)
//   BENCH_IDLE_WINDOW_MS  how long the idle pull request is watched       (60000)
//   BENCH_PHASES       requests,cpu,latency,webhook,review,review-idle (all)
import { performance } from 'node:perf_hooks';
import type { IssueRun, Workflow } from '../src/api/index.js';
import { pollWorkflow } from '../src/controller/workflow/poll.js';
import type { KubeClient } from '../src/controller/runtime/client.js';
import type { Informer } from '../src/controller/runtime/informer.js';
import { startController } from '../src/controller/main.js';
import { createGithubTracker, EtagCache } from '../src/tracker/github/index.js';
import { createLinearTracker } from '../src/tracker/linear/index.js';
import { createMemoryTracker } from '../src/tracker/memory.js';
import type { TrackerAdapter } from '../src/tracker/types.js';
import { parseConfig } from '../src/workflow/config.js';
import { normalizeIssue } from '../src/workflow/issue.js';
import { startGithubStandIn } from '../test/support/fakes/github-server.js';
import { fixtureData, withBulkProject } from '../test/support/fakes/linear-data.js';
import { startLinearStandIn } from '../test/support/fakes/linear-server.js';
import { KubeConfig } from '@kubernetes/client-node';
import { collection, createNamespace, startBenchCluster, until } from './reconcile-env.js';
import { reviewPhases } from './dispatch-review.js';
import { webhookLatency } from './dispatch-webhook.js';
import { say, median } from './report.js';

const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  return Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
};
const phases = new Set(
  (process.env.BENCH_PHASES ?? 'requests,cpu,latency,webhook,review,review-idle').split(','),
);
const SIZES = [1, 100, 1000];
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
};

async function trackerRequests(): Promise<void> {
  console.log('\n## Tracker requests per poll (candidates, then a refresh of 50 held issues)\n');
  console.log(
    '| tracker | candidates | requests, first poll | requests, next poll | rate limit spent, next poll |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const size of SIZES) {
    const key = 'lin_api_benchKey0123456789';
    const linear = await startLinearStandIn(withBulkProject(fixtureData(), size), key);
    const { config } = parseConfig({
      tracker: { kind: 'linear', endpoint: linear.url, project_slug: 'bulk9', api_key: key },
    });
    const adapter = createLinearTracker({ config: config.tracker });
    const poll = async () => {
      const before = linear.requests.length;
      const found = await adapter.fetchCandidates();
      await adapter.fetchByIds(found.slice(0, 50).map((issue) => issue.id ?? ''));
      return linear.requests.length - before;
    };
    const first = await poll();
    const next = await poll();
    console.log(`| linear | ${size} | ${first} | ${next} | — |`);
    await linear.close();
  }
  for (const size of SIZES) {
    const github = await startGithubStandIn({
      issues: Array.from({ length: size }, (_, index) => ({
        number: index + 1,
        title: `Issue ${index + 1}`,
        labels: ['lorenz:todo'],
      })),
    });
    const { config } = parseConfig({
      tracker: {
        kind: 'github',
        endpoint: github.url,
        repository: github.repository,
        api_key: github.token,
      },
    });
    const adapter = createGithubTracker({ config: config.tracker, cache: new EtagCache() });
    const poll = async () => {
      const before = github.requests.length;
      const spentBefore = github.rateLimit.remaining;
      const found = await adapter.fetchCandidates();
      await adapter.fetchByIds(found.slice(0, 50).map((issue) => issue.id ?? ''));
      return {
        requests: github.requests.length - before,
        spent: spentBefore - github.rateLimit.remaining,
      };
    };
    const first = await poll();
    const next = await poll();
    console.log(
      `| github | ${size} | ${first.requests} | ${next.requests} | ${next.spent} (goal 0) |`,
    );
    await github.close();
  }
  console.log(
    '\nLinear pages 50 issues a request and asks for held issues 50 at a time; GitHub pages',
  );
  console.log(
    '100 a request and reads held issues one by one, each answered 304 (free) when unchanged.',
  );
}

/** The poll's I/O with nothing behind it: what is measured is the policy and the plan. */
const quietClient = { request: () => Promise.resolve({}) } as unknown as KubeClient;

async function pollCpu(): Promise<void> {
  const size = 1000;
  const issues = Array.from({ length: size }, (_, index) =>
    normalizeIssue({
      id: String(index),
      identifier: `CPU-${index}`,
      title: `Issue ${index}`,
      state: index % 3 === 0 ? 'In Progress' : 'Todo',
      priority: (index % 5) as 0,
      created_at: new Date(1_700_000_000_000 + index * 1000).toISOString(),
      blocked_by: index % 7 === 0 ? [{ identifier: `CPU-${index + 1}`, state: 'Todo' }] : [],
    }),
  );
  const { config } = parseConfig({ agent: { max_concurrent_agents: 50 } });
  const tracker: TrackerAdapter = createMemoryTracker(issues, config.tracker);
  const workflow = { metadata: { name: 'cpu', namespace: 'ns', uid: 'u' }, spec: {} } as Workflow;
  const informer = { list: () => [] as IssueRun[] } as unknown as Informer<IssueRun>;
  const samples: number[] = [];
  for (let round = 0; round < 25; round += 1) {
    const start = process.cpuUsage();
    await pollWorkflow(workflow, config, undefined, {
      client: quietClient,
      issueRuns: informer,
      now: () => new Date(),
      trackerFor: () => Promise.resolve(tracker),
    });
    const used = process.cpuUsage(start);
    samples.push((used.user + used.system) / 1000);
  }
  console.log('\n## Controller CPU per poll at 1000 candidate issues\n');
  console.log(
    `median ${median(samples.slice(5)).toFixed(1)} ms CPU (first poll, JIT cold: ${samples[0]?.toFixed(1)} ms); 50 dispatched a poll`,
  );
}

async function latency(): Promise<void> {
  const samples = envNumber('BENCH_SAMPLES', 20);
  const interval = envNumber('BENCH_INTERVAL_MS', 2000);
  say('starting the local control plane');
  const cluster = await startBenchCluster();
  const ns = 'dispatch';
  try {
    await createNamespace(cluster.admin, ns);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(cluster.controllerKubeconfig);
    const controller = await startController({
      kubeConfig,
      namespace: ns,
      handleSignals: false,
      identity: 'bench',
    });
    const text = (todo: number) => `---
tracker:
  kind: memory
  issues:
${Array.from({ length: samples }, (_, index) => `    - { id: "${index}", identifier: "LAT-${index}", title: "t", state: "${index < todo ? 'Todo' : 'Backlog'}" }`).join('\n')}
agent: { kind: codex, max_concurrent_agents: ${samples + 1} }
polling: { interval_ms: ${interval} }
---
Work.`;
    await cluster.admin.request({
      method: 'POST',
      path: collection.workflows(ns),
      body: {
        apiVersion: 'lorenz.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'lat' },
        spec: {
          workflow: text(0),
          podTemplate: { spec: { containers: [{ name: 'agent', image: 'x' }] } },
        },
      },
    });
    const latencies: number[] = [];
    for (let index = 0; index < samples; index += 1) {
      // Land somewhere in the poll cycle, as a tracker change would.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * interval));
      await cluster.admin.request({
        method: 'PATCH',
        path: `${collection.workflows(ns)}/lat`,
        patchType: 'merge',
        body: { spec: { workflow: text(index + 1) } },
      });
      const moved = performance.now();
      await until(
        `the Pod of LAT-${index}`,
        async () => {
          const pods = await cluster.admin.request<{ items: unknown[] }>({
            path: `/api/v1/namespaces/${ns}/pods`,
            query: { labelSelector: `lorenz.dev/issuerun=lat-lat-${index}` },
          });
          return pods.items.length > 0 ? true : undefined;
        },
        60_000,
      );
      latencies.push(performance.now() - moved);
    }
    await controller.stop();
    console.log('\n## Issue enters Todo → its run Pod exists\n');
    console.log(`| poll interval | samples | p50 | p99 | goal (p99) |`);
    console.log('|---:|---:|---:|---:|---:|');
    console.log(
      `| ${interval} ms | ${samples} | ${percentile(latencies, 50).toFixed(0)} ms | ${percentile(latencies, 99).toFixed(0)} ms | ≤ ${interval + 1000} ms |`,
    );
    console.log('\n(the probe itself polls every 250 ms, so figures are up to 250 ms high)');
  } finally {
    await cluster.stop();
  }
}

if (phases.has('requests')) await trackerRequests();
if (phases.has('cpu')) await pollCpu();
if (phases.has('latency')) await latency();
if (phases.has('webhook')) await webhookLatency(envNumber('BENCH_SAMPLES', 20), percentile, say);
if (phases.has('review') || phases.has('review-idle')) {
  await reviewPhases(
    {
      latency: phases.has('review'),
      idle: phases.has('review-idle'),
      samples: envNumber('BENCH_SAMPLES', 10),
      idleWindowMs: envNumber('BENCH_IDLE_WINDOW_MS', 60_000),
    },
    percentile,
    say,
  );
}
process.exit(0);
