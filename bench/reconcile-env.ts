// The benchmark's surroundings: one control plane with an audit log, the Lorenz controller
// as a child process, kube-controller-manager with only its Job loop, and the objects both
// are fed (Workflow, IssueRun, Job) in namespaces of their own.
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createKubeconfigFor,
  installCrds,
  startControlPlane,
  type ControlPlane,
} from '../hack/cluster/control-plane.js';
import { startProcess, type ManagedProcess } from '../hack/cluster/processes.js';
import { createKubeClient, type KubeClient } from '../src/controller/runtime/client.js';
import { auditApiserverArgs, CONTROLLER_USER, JOB_CONTROLLER_USER } from './reconcile-audit.js';
import type { ControllerReply, ControllerRequest } from './reconcile-controller.js';

/** The repository, whether this runs from source or from a bundle written next to it. */
export const repo = fileURLToPath(new URL('..', import.meta.url));
const NODE_BIN = join(repo, 'node_modules', 'node', 'bin');
/** The Node flags the Dockerfile's ENTRYPOINT gives the controller, read from it. */
const IMAGE_NODE_FLAGS = (() => {
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(join(repo, 'Dockerfile'), 'utf8'));
  const words = entrypoint ? (JSON.parse(entrypoint[1] as string) as string[]) : [];
  return words.filter((word) => word.startsWith('--')).join(' ');
})();

export interface BenchCluster {
  cp: ControlPlane;
  admin: KubeClient;
  auditLog: string;
  controllerKubeconfig: string;
  jobControllerKubeconfig: string;
  /** Scratch dir for bundles; world-readable, since run Pods run as another uid. */
  scratch: string;
  stop(): Promise<void>;
}

export async function startBenchCluster(): Promise<BenchCluster> {
  // The control plane finds hack/tools.sh next to its own source; in a bundle that is here.
  process.env.LORENZ_TOOLS_SCRIPT ??= join(repo, 'hack', 'tools.sh');
  const scratch = await mkdtemp(join(tmpdir(), 'lorenz-bench-'));
  await chmod(scratch, 0o755);
  const audit = await auditApiserverArgs(scratch);
  // No controller-manager loops of its own: nothing but the benchmarked controllers runs.
  const cp = await startControlPlane({ controllers: [], extraApiserverArgs: audit.args });
  try {
    await installCrds(cp, [
      join(repo, 'crds/lorenz.dev_workflows.yaml'),
      join(repo, 'crds/lorenz.dev_issueruns.yaml'),
    ]);
    // Both controllers act as users of their own (system:masters) so the audit log tells
    // their writes apart from the benchmark's.
    const controllerKubeconfig = await createKubeconfigFor(cp, {
      name: CONTROLLER_USER,
      groups: ['system:masters'],
    });
    const jobControllerKubeconfig = await createKubeconfigFor(cp, {
      name: JOB_CONTROLLER_USER,
      groups: ['system:masters'],
    });
    const admin = createKubeClient(cp.kubeConfig);
    return {
      cp,
      admin,
      auditLog: audit.logPath,
      controllerKubeconfig,
      jobControllerKubeconfig,
      scratch,
      async stop() {
        admin.close();
        await cp.stop();
        await rm(scratch, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await cp.stop();
    throw error;
  }
}

/** A namespace with its `default` ServiceAccount (no serviceaccount controller runs). */
export async function createNamespace(admin: KubeClient, name: string): Promise<void> {
  await admin.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
  });
  await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${name}/serviceaccounts`,
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } },
  });
}

export const collection = {
  workflows: (ns: string) => `/apis/lorenz.dev/v1alpha1/namespaces/${ns}/workflows`,
  issueRuns: (ns: string) => `/apis/lorenz.dev/v1alpha1/namespaces/${ns}/issueruns`,
  jobs: (ns: string) => `/apis/batch/v1/namespaces/${ns}/jobs`,
};

/** WORKFLOW.md with four trivial hooks and the scripted ACP agent (one turn). */
export function workflowText(scriptedAgent: string): string {
  return `---
tracker:
  kind: memory
agent:
  kind: scripted
  max_turns: 1
agents:
  scripted:
    bridge_command: ${join(NODE_BIN, 'node')} ${scriptedAgent}
hooks:
  after_create: "echo created {{ issue.identifier }}"
  before_run: "true"
  after_run: "true"
  before_remove: "true"
---
Work on {{ issue.identifier }}.
@write done.txt ok
`;
}

export async function createWorkflow(
  admin: KubeClient,
  ns: string,
  name: string,
  text: string,
  extra: object = {},
): Promise<void> {
  await admin.request({
    method: 'POST',
    path: collection.workflows(ns),
    body: {
      apiVersion: 'lorenz.dev/v1alpha1',
      kind: 'Workflow',
      metadata: { name },
      spec: {
        workflow: text,
        podTemplate: {
          spec: {
            containers: [
              {
                name: 'agent',
                image: 'lorenz-bench/agent:1',
                env: [{ name: 'PATH', value: `${NODE_BIN}:/usr/local/bin:/usr/bin:/bin` }],
              },
            ],
          },
        },
        ...extra,
      },
    },
  });
}

export const issueRunBody = (workflow: string) => (name: string) => ({
  apiVersion: 'lorenz.dev/v1alpha1',
  kind: 'IssueRun',
  metadata: { name },
  spec: {
    workflowRef: { name: workflow },
    issue: { identifier: name.toUpperCase(), title: `Benchmark ${name}`, state: 'Todo' },
  },
});

export const jobBody = (name: string) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: {
    backoffLimit: 0,
    template: {
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: 'main', image: 'lorenz-bench/agent:1', command: ['true'] }],
      },
    },
  },
});

/** Polls `probe` every 250 ms until it returns a value; throws after `timeoutMs`. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** VmRSS, VmHWM (peak) and RssAnon (heap and native memory, no mapped files), in MiB. */
export async function memoryOf(
  pid: number,
): Promise<{ rssMiB: number; peakMiB: number; anonMiB: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return {
    rssMiB: kib('VmRSS') / 1024,
    peakMiB: kib('VmHWM') / 1024,
    anonMiB: kib('RssAnon') / 1024,
  };
}

export interface ControllerChild {
  pid: number;
  writes(): Promise<{ writes: number; log: string[] }>;
  /** After a full GC in the child: V8 heap in use and the RSS that is left. */
  collected(): Promise<{
    heapUsedMiB: number;
    heapTotalMiB: number;
    externalMiB: number;
    rssMiB: number;
    spaces: string;
  }>;
  /** Starts V8's sampling profiler in the child (BENCH_PROFILE). */
  profileStart(): Promise<void>;
  /** Stops it: the .cpuprofile JSON of what ran since profileStart, and the sampled allocations. */
  profileStop(): Promise<{ cpu: string; allocations: string }>;
  stop(): Promise<void>;
}

/**
 * Forks the bundled controller (the same code `lorenz controller` runs) for one namespace
 * and resolves once its informers have synced.
 */
export async function startControllerChild(
  bundle: string,
  kubeconfig: string,
  namespace: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ControllerChild> {
  const child = fork(bundle, [kubeconfig, namespace], {
    env,
    execPath: process.execPath,
    // BENCH_NODE_FLAGS: the controller's Node/V8 flags; by default those of the image's
    // ENTRYPOINT (Dockerfile), so the figures are those of what ships.
    execArgv: [
      '--expose-gc',
      ...(process.env.BENCH_NODE_FLAGS ?? IMAGE_NODE_FLAGS).split(/\s+/).filter(Boolean),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = (type: ControllerReply['type']) =>
    new Promise<ControllerReply>((resolve, reject) => {
      const onMessage = (reply: ControllerReply) => {
        if (reply.type !== type) return;
        child.off('exit', onExit);
        child.off('message', onMessage);
        resolve(reply);
      };
      const onExit = (code: number | null) => {
        child.off('message', onMessage);
        reject(new Error(`the controller exited (${code}) before it answered ${type}`));
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  await next('started');
  const ask = (request: ControllerRequest) => child.send(request);
  return {
    pid: child.pid ?? 0,
    async writes() {
      const reply = next('writes');
      ask({ type: 'writes' });
      const answer = await reply;
      return answer.type === 'writes' ? answer : { writes: 0, log: [] };
    },
    async collected() {
      const reply = next('memory');
      ask({ type: 'memory' });
      const answer = await reply;
      if (answer.type !== 'memory') throw new Error('the controller answered out of turn');
      return answer;
    },
    async profileStart() {
      const reply = next('profiling');
      ask({ type: 'profile-start' });
      await reply;
    },
    async profileStop() {
      const reply = next('profile');
      ask({ type: 'profile-stop' });
      const answer = await reply;
      return answer.type === 'profile'
        ? { cpu: answer.profile, allocations: answer.allocations }
        : { cpu: '', allocations: '' };
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      ask({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** kube-controller-manager running only its Job loop, against the same apiserver. */
export function startJobController(
  cluster: BenchCluster,
  qps: number,
  burst: number,
): ManagedProcess {
  return startProcess(
    'kube-controller-manager',
    cluster.cp.tools.kubeControllerManager,
    [
      `--kubeconfig=${cluster.jobControllerKubeconfig}`,
      '--controllers=job-controller',
      '--leader-elect=false',
      '--use-service-account-credentials=false',
      '--secure-port=0',
      `--kube-api-qps=${qps}`,
      `--kube-api-burst=${burst}`,
    ],
    join(cluster.cp.dir, 'logs', `kube-controller-manager-job-qps${qps}.log`),
  );
}
