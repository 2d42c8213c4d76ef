// `npm run bench:warm`, second part: issue 32's start-time comparison. From an IssueRun's create
// to its agent's first turn, for a repository whose setup takes 60 s, started clean (the
// setup in after_create) and warm (`workspace.warm`: the warm controller runs the setup once
// into a warm-up claim and snapshots it; runs' claims are restored from that snapshot,
// docs/snapshots.md#warm-workspaces). Goal: warm ≤ 5 s plus the claim's
// restore, whatever the setup costs. A benchmark, not a test: it prints the figures beside
// the goal and never fails on them. Needs root and Docker (the images of hack/images.sh), as
// bench/pod-start.ts does; the node and its CSI stack are test/containers' (real-node-env.ts,
// csi-stack.ts), on an identity of this benchmark's own.
//
// The setup is simulated: `sleep 60 && echo set up > setup-marker` (BENCH_SETUP_S). Both
// Workflows have the same WORKFLOW.md (after_create the setup, before_run checking its
// marker, the scripted agent the images ship, one turn) and a claim template of the CSI
// class; `warm` adds `workspace.warm`, whose warm-up is timed first (the Workflow's create to
// its status naming a ready snapshot). Runs go one at a time, interleaved clean, warm, …;
// each is timed client side from its create (wall clock, ms) to:
//   claim exists, claim Bound   (polled every 10 ms): the claim's restore is Bound − exists;
//   first turn                  the runner's `turn_started` record's `at` in the run Pod's
//                               log (the agent's first turn begins: the session is up, the
//                               prompt about to be sent);
//   digest check                the `workspace_restored` record's durationMs (warm only).
//
//   BENCH_RUNS     runs of each Workflow (3)
//   BENCH_SETUP_S  the simulated setup's seconds (60)
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import type { Workflow } from '../src/api/index.js';
import { AGENT_CONTAINER_NAME } from '../src/api/run-pod.js';
import { createKubeClient, getIfExists } from '../src/controller/runtime/client.js';
import {
  controllerKubeConfig,
  installOperator,
  startTestController,
} from '../test/integration/operator-harness.js';
import { lorenzApi } from '../test/containers/lorenz-api.js';
import { builtImages, median, say } from './report.js';
import { scriptedWorkflowText } from '../test/support/scripted-workflow.js';
import {
  realNodeSkipReason,
  startRealNode,
  type RealNode,
} from '../test/containers/real-node-env.js';
import { CSI_CONTROLLERS, CSI_STORAGE_CLASS, startCsiStack } from '../test/containers/csi-stack.js';

const root = join(import.meta.dirname, '..');
// Bundled into bench/ by hack/run-ts.sh: hack/cluster cannot find tools.sh from there.
process.env.LORENZ_TOOLS_SCRIPT ??= join(root, 'hack', 'tools.sh');

const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  return Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
};
const RUNS = envNumber('BENCH_RUNS', 3);
const SETUP_S = envNumber('BENCH_SETUP_S', 60);
const GOAL_MS = 5000;
const NAMESPACE = 'bench-warm';
// Not the tests' nodes, bench/pod-start.ts's, e2e-local's nor the dev cluster's.
const IDENTITY = {
  LORENZ_NODE_NAME: 'lorenz-bench-warm',
  LORENZ_NODE_IP: '10.89.0.7',
  LORENZ_KUBELET_PORT: '10256',
  LORENZ_BRIDGE: 'lorenz6',
  LORENZ_POD_CIDR: '10.88.6.0/24',
};

const SETUP = `sleep ${SETUP_S} && echo set up > setup-marker`;
const HOOKS = {
  timeout_ms: SETUP_S * 1000 + 60_000,
  after_create: SETUP,
  before_run: 'test -e setup-marker',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sample {
  claimExists: number;
  claimBound: number;
  firstTurn: number;
  /** The runner's digest check of the restored tree (warm only). */
  digestMs?: number;
  digestFiles?: number;
}

const claimSpec = {
  storageClassName: CSI_STORAGE_CLASS,
  accessModes: ['ReadWriteOnce'],
  resources: { requests: { storage: '10Mi' } },
};

/**
 * The warm Workflow's warm-up, timed from the Workflow's create to its status naming a ready
 * snapshot: the warm controller's Pod runs the setup into .lorenz-source/ and digests it, then
 * the claim is snapshotted (docs/snapshots.md#warm-workspaces).
 */
async function warmedUp(
  admin: ReturnType<typeof createKubeClient>,
  created: number,
): Promise<{ snapshot: string; digest: string; ms: number }> {
  const path = `/apis/lorenz.dev/v1alpha1/namespaces/${NAMESPACE}/workflows/warm`;
  const deadline = created + (SETUP_S + 240) * 1000;
  for (;;) {
    const warm = (await admin.request<Workflow>({ path })).status?.warm;
    if (warm?.snapshot && warm.digest) {
      return { snapshot: warm.snapshot, digest: warm.digest, ms: Date.now() - created };
    }
    if (warm?.reason === 'WarmUpFailed' || warm?.reason === 'WarmWorkspaceUnsupported')
      throw new Error(`the warm-up failed: ${warm.reason}: ${warm.message ?? ''}`);
    if (Date.now() > deadline) throw new Error('the warm snapshot was not ready in time');
    await sleep(200);
  }
}

/** The runner's JSON lines of the run's Pod (the agent container). */
function runnerRecords(
  node: RealNode,
  run: string,
): { type?: string; at?: string; message?: unknown }[] {
  const pod = node
    .kubectl([
      ...['-n', NAMESPACE, 'get', 'pods', '-l', `lorenz.dev/issuerun=${run}`],
      ...['-o', 'jsonpath={.items[0].metadata.name}'],
    ])
    .trim();
  if (!pod) throw new Error(`no Pod of run ${run} left to read its log from`);
  const log = node.kubectl(['-n', NAMESPACE, 'logs', pod, '-c', AGENT_CONTAINER_NAME]);
  return log
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as { type?: string; at?: string; message?: unknown }];
      } catch {
        return [];
      }
    });
}

/** One IssueRun of `workflow`, created and run to its end; its start timed. */
async function timeRun(
  node: RealNode,
  admin: ReturnType<typeof createKubeClient>,
  workflow: string,
  name: string,
): Promise<Sample> {
  const runs = lorenzApi(() => admin, NAMESPACE);
  const claimPath = `/api/v1/namespaces/${NAMESPACE}/persistentvolumeclaims/${name}-0-workspace`;
  const created = Date.now();
  await runs.createRun(name, workflow);
  // The claim first, polled every 10 ms until Bound (a restore is quick on this driver); then
  // the run, every 200 ms, to its end, so that runs do not overlap.
  let claimExists: number | undefined;
  let claimBound: number | undefined;
  const deadline = created + (SETUP_S + 240) * 1000;
  while (claimBound === undefined) {
    const claim = await getIfExists<{ status?: { phase?: string } }>(admin, claimPath);
    if (claim) claimExists ??= Date.now() - created;
    if (claim?.status?.phase === 'Bound') claimBound = Date.now() - created;
    if (Date.now() > deadline) throw new Error(`run ${name}: its claim was not Bound in time`);
    await sleep(10);
  }
  const run = await runs.finished(name, Math.max(0, deadline - Date.now()));
  if (run.status?.phase !== 'Succeeded')
    throw new Error(`run ${name} ended ${run.status?.phase}: ${run.status?.message}`);
  const records = runnerRecords(node, name);
  const turn = records.find((record) => record.type === 'turn_started');
  if (!turn?.at) throw new Error(`run ${name}: no turn_started record in its Pod's log`);
  const restored = records.find((record) => record.type === 'workspace_restored')?.message as
    { durationMs?: number; files?: number } | undefined;
  return {
    claimExists: claimExists ?? NaN,
    claimBound,
    firstTurn: Date.parse(turn.at) - created,
    ...(restored ? { digestMs: restored.durationMs, digestFiles: restored.files } : {}),
  };
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const msSpread = (values: number[]) =>
  `${Math.round(median(values))} ms (${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))})`;
const spread = (values: number[]) =>
  `${seconds(median(values))} s (${seconds(Math.min(...values))}–${seconds(Math.max(...values))})`;

function report(clean: Sample[], warm: Sample[], warmUpMs: number): void {
  const turn = (samples: Sample[]) => samples.map((s) => s.firstTurn);
  const restore = (samples: Sample[]) => samples.map((s) => s.claimBound - s.claimExists);
  const cleanTurn = median(turn(clean));
  const warmTurn = median(turn(warm));
  const warmRestore = median(restore(warm));
  const goal = GOAL_MS + warmRestore;
  const digest = warm.flatMap((s) => (s.digestMs === undefined ? [] : [s.digestMs]));
  console.log(
    `\n## IssueRun created → the agent's first turn (runner's turn_started), setup ${SETUP_S} s` +
      ` (sleep), ${RUNS} runs each, interleaved; median (min–max)\n`,
  );
  console.log(
    '| start | first turn | claim exists | claim Bound − exists (restore) | digest check |',
  );
  console.log('|---|---|---|---|---|');
  console.log(
    `| clean (after_create: the setup) | ${spread(turn(clean))} | ${msSpread(clean.map((s) => s.claimExists))} | ${msSpread(restore(clean))} | — |`,
  );
  console.log(
    `| warm (from the snapshot) | ${spread(turn(warm))} | ${msSpread(warm.map((s) => s.claimExists))} | ${msSpread(restore(warm))} | ${digest.length ? `${Math.round(median(digest))} ms (${Math.round(Math.min(...digest))}–${Math.round(Math.max(...digest))})` : '—'} |`,
  );
  say(
    `${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, node ${process.version}`,
  );
  console.log(
    `\nclean / warm: ${(cleanTurn / warmTurn).toFixed(1)}× (clean ${seconds(cleanTurn)} s, warm ${seconds(warmTurn)} s)`,
  );
  console.log(
    `warm first turn: median ${seconds(warmTurn)} s; goal ≤ 5 s + the claim's restore (${Math.round(warmRestore)} ms) = ${seconds(goal)} s: ${(warmTurn / goal).toFixed(2)}× the goal`,
  );
  console.log(
    `the warm-up (Workflow created → status.warm names a ready snapshot, once per default-branch head): ${seconds(warmUpMs)} s`,
  );
  console.log(
    `warm without the claim's restore: ${seconds(warmTurn - warmRestore)} s; clean minus the setup: ${seconds(cleanTurn - SETUP_S * 1000)} s`,
  );
}

async function main(): Promise<void> {
  const built = builtImages();
  const reason = realNodeSkipReason({ available: true });
  if (reason) throw new Error(reason);
  say('starting a control plane, a real node and the CSI stack…');
  const node = await startRealNode({
    identity: IDENTITY,
    extraControllers: CSI_CONTROLLERS,
    repoRoot: root,
  });
  try {
    await startCsiStack(node, { repoRoot: root });
    await node.createRestrictedNamespace(NAMESPACE);
    await installOperator(node.cp, root);
    const admin = createKubeClient(node.cp.kubeConfig);
    try {
      const workflow = scriptedWorkflowText('node /lorenz-bin/scripted-agent.mjs', {
        hooks: HOOKS,
      });
      const created = Date.now();
      for (const [name, warm] of [
        ['warm', { warm: {} }],
        ['clean', {}],
      ] as const) {
        await lorenzApi(() => admin, NAMESPACE).createWorkflow(name, {
          workflow,
          podTemplate: {
            spec: { containers: [{ name: AGENT_CONTAINER_NAME, image: built.agent }] },
          },
          workspace: { volumeClaimTemplate: { spec: claimSpec }, ...warm },
        });
      }
      const controller = await startTestController(controllerKubeConfig(node.cp), NAMESPACE, {
        operatorImage: built.operator,
      });
      const clean: Sample[] = [];
      const warm: Sample[] = [];
      let warmUp: Awaited<ReturnType<typeof warmedUp>> | undefined;
      try {
        say(`the warm controller prepares the warm snapshot (the setup: ${SETUP_S} s)…`);
        warmUp = await warmedUp(admin, created);
        say(`warm: ${warmUp.snapshot} ${warmUp.digest} in ${seconds(warmUp.ms)} s`);
        for (let i = 1; i <= RUNS; i += 1) {
          for (const [workflow, samples] of [
            ['clean', clean],
            ['warm', warm],
          ] as const) {
            const sample = await timeRun(node, admin, workflow, `${workflow}-${i}`);
            samples.push(sample);
            say(
              `${workflow} ${i}/${RUNS}: ${JSON.stringify(sample, (_, v: unknown) => (typeof v === 'number' ? Math.round(v) : v))}`,
            );
          }
        }
      } finally {
        await controller.stop();
      }
      report(clean, warm, warmUp?.ms ?? NaN);
    } finally {
      admin.close();
    }
  } finally {
    await node.stop();
  }
}

await main();
