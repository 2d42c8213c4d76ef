// `npm run bench:pod-start`: how long a run takes to start on the real node (kubelet,
// containerd, runc: test/containers/real-node-env.ts) against the process node (the integration
// tier's), through the same in-process controller. A benchmark, not a test: it prints
// figures and never fails on them. Needs root and Docker (the images of hack/images.sh).
//
// Each sample is one IssueRun, created and run to its end before the next, timed from its
// create (client side, polled every 50 ms) to: its Pod exists; the Pod leaves Pending
// (Running, or already ended); the after_create hook's HookStarted Event.
//
// `npm run bench:kueue` (BENCH_NODES=kueue): the same run on the process node with and
// without `spec.queueName`, Kueue (hack/cluster/kueue.ts) admitting it from a queue with room
// to spare: what Kueue's webhook, its Workload and the lifted gate add to a start.
//
//   BENCH_SAMPLES  runs per node (5)
//   BENCH_NODES    real,process (both), or kueue
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { KubeClient } from '../src/controller/runtime/client.js';
import { createKubeClient } from '../src/controller/runtime/client.js';
import { realpathSync } from 'node:fs';
import { startControlPlane } from '../hack/cluster/control-plane.js';
import { startProcessNode } from '../hack/process-node/index.js';
import { startKueue } from '../hack/cluster/kueue.js';
import {
  DEFAULT_OPERATOR_IMAGE,
  OPERATOR_IMAGE_BUNDLE_PATH,
  OPERATOR_IMAGE_LAUNCHER_PATH,
  OPERATOR_IMAGE_SCRIPTED_AGENT_PATH,
  OPERATOR_IMAGE_SNAPSHOT_PATHS,
} from '../src/controller/shared/constants.js';
import {
  controllerKubeConfig,
  installOperator,
  startTestController,
} from '../test/integration/operator-harness.js';
import { lorenzApi } from '../test/containers/lorenz-api.js';
import { builtImages, median, say } from './report.js';
import { realNodeSkipReason, startRealNode } from '../test/containers/real-node-env.js';

const root = join(import.meta.dirname, '..');
// Bundled into bench/ by hack/run-ts.sh: hack/cluster cannot find tools.sh from there.
process.env.LORENZ_TOOLS_SCRIPT ??= join(root, 'hack', 'tools.sh');
const samples = Math.max(1, Number(process.env.BENCH_SAMPLES ?? 5) || 5);
const nodes = new Set((process.env.BENCH_NODES ?? 'real,process').split(','));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sample {
  podCreated: number;
  podStarted: number;
  firstHook: number;
}

const HOOKS = { after_create: 'true', before_run: 'true', after_run: 'true' };

/** Runs `samples` IssueRuns of `workflow` one after another and times each one's start. */
async function timeRuns(admin: KubeClient, namespace: string, workflow: string) {
  const results: Sample[] = [];
  const runs = lorenzApi(() => admin, namespace);
  for (let i = 0; i < samples; i += 1) {
    const name = `${workflow}-${i + 1}`;
    const started = performance.now();
    await runs.createRun(name, workflow);
    const seen: Partial<Sample> = {};
    const deadline = Date.now() + 180_000;
    for (;;) {
      const elapsed = performance.now() - started;
      if (seen.podCreated === undefined || seen.podStarted === undefined) {
        const pods = await admin.request<{ items: { status?: { phase?: string } }[] }>({
          path: `/api/v1/namespaces/${namespace}/pods`,
          query: { labelSelector: `lorenz.dev/issuerun=${name}` },
        });
        const pod = pods.items[0];
        if (pod) seen.podCreated ??= elapsed;
        if (pod && (pod.status?.phase ?? 'Pending') !== 'Pending') seen.podStarted ??= elapsed;
      }
      if (seen.firstHook === undefined) {
        const events = await admin.request<{
          items: { reason?: string; note?: string; regarding?: { name?: string } }[];
        }>({ path: `/apis/events.k8s.io/v1/namespaces/${namespace}/events` });
        const hook = events.items.find(
          (event) =>
            event.regarding?.name === name &&
            event.reason === 'HookStarted' &&
            event.note?.startsWith('after_create'),
        );
        if (hook) seen.firstHook = elapsed;
      }
      if (
        seen.podCreated !== undefined &&
        seen.podStarted !== undefined &&
        seen.firstHook !== undefined
      )
        break;
      if (Date.now() > deadline)
        throw new Error(`run ${name} did not start in 180 s: ${JSON.stringify(seen)}`);
      await sleep(50);
    }
    // To its end, so that samples do not overlap.
    const run = await runs.finished(name, Math.max(0, deadline - Date.now()));
    if (run.status?.phase !== 'Succeeded')
      throw new Error(`run ${name} ended ${run.status?.phase}: ${run.status?.message}`);
    results.push(seen as Sample);
    say(
      `${workflow} ${i + 1}/${samples}: ${JSON.stringify(seen, (_, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))}`,
    );
  }
  return results;
}

function report(label: string, results: Sample[]): void {
  const column = (key: keyof Sample) => {
    const values = results.map((sample) => sample[key]);
    return `${Math.round(median(values))} (${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))})`;
  };
  console.log(
    `| ${label} | ${results.length} | ${column('podCreated')} | ${column('podStarted')} | ${column('firstHook')} |`,
  );
}

/** WORKFLOW.md: the scripted agent the operator image ships, three trivial hooks. */
const WORKFLOW = `---
tracker:
  kind: memory
agent:
  kind: scripted
  max_turns: 1
agents:
  scripted:
    bridge_command: node /lorenz-bin/scripted-agent.mjs
hooks:
${Object.entries(HOOKS)
  .map(([hook, body]) => `  ${hook}: ${JSON.stringify(body)}`)
  .join('\n')}
---
Work on {{ issue.identifier }}.
@write done.txt ok
`;

/** What each run Pod asks for: what Kueue counts against the queue's quota. */
const AGENT_RESOURCES = { requests: { cpu: '100m' } };

/** A queue with room for every sample: Kueue admits at once, nothing waits for quota. */
const kueueObjects = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: { name: default-flavor }
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: { name: bench }
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu]
      flavors: [{ name: default-flavor, resources: [{ name: cpu, nominalQuota: '100' }] }]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: { name: bench, namespace: bench }
spec: { clusterQueue: bench }
`;

/** The controller in-process against `cp`, one Workflow `name` on `agentImage`, timed. */
async function timeOnCluster(
  cp: Parameters<typeof installOperator>[0],
  name: string,
  images: { operator: string; agent: string },
  prepare: (namespace: string) => Promise<void>,
  /** A second Workflow timed after the first, the same but for its spec (`spec.queueName`). */
  variant?: { name: string; spec: object },
): Promise<Sample[][]> {
  const namespace = 'bench';
  const admin = createKubeClient(cp.kubeConfig);
  try {
    await installOperator(cp, root);
    await prepare(namespace);
    const controller = await startTestController(controllerKubeConfig(cp), namespace, {
      operatorImage: images.operator,
    });
    try {
      const agent = { name: 'agent', image: images.agent, resources: AGENT_RESOURCES };
      const workflows = [{ name, spec: {} }, ...(variant ? [variant] : [])];
      const timed: Sample[][] = [];
      for (const workflow of workflows) {
        await lorenzApi(() => admin, namespace).createWorkflow(workflow.name, {
          workflow: WORKFLOW,
          podTemplate: { spec: { containers: [agent] } },
          ...workflow.spec,
        });
        timed.push(await timeRuns(admin, namespace, workflow.name));
      }
      return timed;
    } finally {
      await controller.stop();
    }
  } finally {
    admin.close();
  }
}

async function realNode(): Promise<Sample[]> {
  const built = builtImages();
  const reason = realNodeSkipReason({ available: true });
  if (reason) throw new Error(reason);
  say('starting a control plane and a real node…');
  const node = await startRealNode({
    identity: {
      LORENZ_NODE_NAME: 'lorenz-bench-node',
      LORENZ_NODE_IP: '10.89.0.4',
      LORENZ_KUBELET_PORT: '10253',
      LORENZ_BRIDGE: 'lorenz3',
      LORENZ_POD_CIDR: '10.88.3.0/24',
    },
    repoRoot: root,
  });
  try {
    const [timed = []] = await timeOnCluster(node.cp, 'real', built, (namespace) =>
      node.createRestrictedNamespace(namespace),
    );
    return timed;
  } finally {
    await node.stop();
  }
}

/**
 * The process node as `make dev` maps it (hack/lib/local-cluster.sh): the operator image is
 * this checkout's dist/ (`npm run build`: bundle, launcher, startup snapshot, scripted agent),
 * the agent image is the host with the project's node at /usr/bin/node.
 */
const PROCESS_AGENT_IMAGE = 'lorenz-bench/agent:1';

function startBenchProcessNode(cp: Parameters<typeof installOperator>[0]) {
  const dist = (file: string) => join(root, 'dist', file);
  const agentImage = PROCESS_AGENT_IMAGE;
  return startProcessNode({
    controlPlane: cp,
    imageMap: {
      [DEFAULT_OPERATOR_IMAGE]: {
        [OPERATOR_IMAGE_BUNDLE_PATH]: dist('lorenz.js'),
        [OPERATOR_IMAGE_LAUNCHER_PATH]: dist('lorenz'),
        [OPERATOR_IMAGE_SCRIPTED_AGENT_PATH]: dist('scripted-agent.mjs'),
        ...Object.fromEntries(
          OPERATOR_IMAGE_SNAPSHOT_PATHS.map((path) => [
            path,
            dist(path.replace(/^\/lorenz\//, '')),
          ]),
        ),
      },
      [agentImage]: { '/usr/bin/node': realpathSync(join(root, 'node_modules', '.bin', 'node')) },
    },
  });
}

/** kubectl against `cp` (`input` on its stdin); throws with its stderr when it fails. */
function kubectlOn(cp: Parameters<typeof installOperator>[0], args: string[], input = ''): void {
  const done = spawnSync(cp.tools.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args], {
    encoding: 'utf8',
    input,
  });
  if (done.status !== 0) throw new Error(`kubectl ${args.join(' ')}: ${done.stderr}`);
}

/** The namespace, and its default ServiceAccount (no serviceaccount controller runs here). */
const processNamespace = (cp: Parameters<typeof installOperator>[0]) => (namespace: string) => {
  kubectlOn(cp, ['create', 'namespace', namespace]);
  kubectlOn(cp, ['-n', namespace, 'create', 'serviceaccount', 'default']);
  return Promise.resolve();
};

async function processNode(): Promise<Sample[]> {
  say('starting a control plane and the process node…');
  const cp = await startControlPlane({ controllers: ['garbage-collector-controller'] });
  const node = await startBenchProcessNode(cp);
  try {
    const [timed = []] = await timeOnCluster(
      cp,
      'process',
      { operator: DEFAULT_OPERATOR_IMAGE, agent: PROCESS_AGENT_IMAGE },
      processNamespace(cp),
    );
    return timed;
  } finally {
    await node.stop();
    await cp.stop();
  }
}

/** The process node with Kueue: one Workflow without a queue, then the same with one. */
async function processNodeWithKueue(): Promise<[Sample[], Sample[]]> {
  say('starting a control plane, the process node and Kueue…');
  const cp = await startControlPlane({ controllers: ['garbage-collector-controller'] });
  const node = await startBenchProcessNode(cp);
  const kueue = await startKueue(cp);
  try {
    const [plain = [], queued = []] = await timeOnCluster(
      cp,
      'plain',
      { operator: DEFAULT_OPERATOR_IMAGE, agent: PROCESS_AGENT_IMAGE },
      async (namespace) => {
        await processNamespace(cp)(namespace);
        kubectlOn(cp, ['apply', '-f', '-'], kueueObjects);
      },
      { name: 'queued', spec: { queueName: 'bench' } },
    );
    return [plain, queued];
  } finally {
    await kueue.stop();
    await node.stop();
    await cp.stop();
  }
}

const rows: [string, Sample[]][] = [];
let kueueRatios: [Sample[], Sample[]] | undefined;
if (nodes.has('kueue')) {
  kueueRatios = await processNodeWithKueue();
  rows.push(['process node, no queueName', kueueRatios[0]]);
  rows.push(['process node, queueName (Kueue admits at once)', kueueRatios[1]]);
}
if (nodes.has('real')) rows.push(['real node (kubelet, containerd, runc)', await realNode()]);
if (nodes.has('process'))
  rows.push(['process node (as `make dev` maps the images)', await processNode()]);
console.log(
  `\n## A run's start, ms from the IssueRun's create: median (min–max), ${samples} runs one at a time\n`,
);
console.log('| node | runs | Pod exists | Pod not Pending | after_create started (Event) |');
console.log('|---|---|---|---|---|');
for (const [label, results] of rows) report(label, results);
if (kueueRatios) {
  const [plain, queued] = kueueRatios;
  const ratio = (key: keyof Sample) =>
    (
      median(queued.map((sample) => sample[key])) / median(plain.map((sample) => sample[key]))
    ).toFixed(2);
  console.log(
    `\nwith Kueue / without: Pod exists ×${ratio('podCreated')}, Pod not Pending ×${ratio('podStarted')}, after_create started ×${ratio('firstHook')}`,
  );
}
