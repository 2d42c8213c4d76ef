// Shared set-up for the operator integration files: one control plane + process node per
// file, the CRDs and config/rbac installed, the controller run in-process as its
// ServiceAccount (impersonated, so a verb missing from config/rbac fails a test).
import { afterAll, beforeAll, inject } from 'vitest';
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import pino, { type Logger } from 'pino';
import { KubeConfig, type V1EnvFromSource, type V1EnvVar } from '@kubernetes/client-node';
import {
  installCrds,
  startControlPlane,
  type ControlPlane,
} from '../../hack/cluster/control-plane.js';
import { freePort } from '../../hack/cluster/ports.js';
import { startProcessNode, type ProcessNode } from '../../hack/process-node/index.js';
import { buildScriptedAgent } from '../fixtures/scripted-agent/build.js';
import { DEFAULT_OPERATOR_IMAGE } from '../../src/controller/shared/constants.js';
import { RUN_POD_PATHS, SCRIPTED_AGENT_FILE } from '../../src/api/run-pod.js';
import {
  startController,
  type ControllerRunOptions,
  type RunningController,
} from '../../src/controller/main.js';
import { createKubeClient, type KubeClient } from '../../src/controller/runtime/client.js';
import { createLogger } from '../../src/controller/runtime/logger.js';
import type { IssueRun } from '../../src/api/index.js';
import type { HookName } from '../../src/workflow/events.js';
import { startGithubStandIn, type GithubStandIn } from '../support/fakes/github-server.js';
import { fixtureData } from '../support/fakes/linear-data.js';
import { startLinearStandIn, type LinearStandIn } from '../support/fakes/linear-server.js';
import { POD_NODE_DIR, providePodNode } from '../support/node-binary.js';
import { scriptedWorkflowText, type WorkflowOptions } from '../support/scripted-workflow.js';
import {
  buildRunnerBundle,
  lorenzCrdFiles,
  operatorImageFiles,
} from '../support/operator-build.js';

const exec = promisify(execFile);
export { freePort };
export type { WorkflowOptions };
export const root = join(import.meta.dirname, '..', '..');
export const NAMESPACE = 'default';
export const CONTROLLER_USER = 'system:serviceaccount:lorenz-system:lorenz-controller';
/** What `kubectl get issueruns` prints, the CRD's printer columns (and AGE). */
export const ISSUE_RUN_COLUMNS = [
  'NAME',
  'ISSUE',
  'WORKFLOW',
  'PHASE',
  'REASON',
  'ATTEMPT',
  'TURN',
  'STARTED',
  'DURATION',
  'AGE',
];
const NODE_BIN = POD_NODE_DIR;

export interface OperatorEnv {
  cp: ControlPlane;
  node: ProcessNode;
  admin: KubeClient;
  controllerConfig: KubeConfig;
  scriptedAgent: string;
  controller: RunningController | undefined;
  /** Starts the controller as the chart runs it; `overrides` change its options. */
  startController(overrides?: Partial<ControllerRunOptions>): Promise<RunningController>;
  kubectl(...args: string[]): Promise<string>;
  stop(): Promise<void>;
  // The helpers below, bound to this environment: `env.createWorkflow(name, text)`.
  workflowText(options?: WorkflowOptions): string;
  /** A Workflow of a WORKFLOW.md: its text, or the options `workflowText` writes it from. */
  createWorkflow(name: string, workflow: string | WorkflowOptions, extra?: object): Promise<void>;
  createIssueRun(name: string, workflow: string, issue: object, spec?: object): Promise<void>;
  getRun(name: string): Promise<IssueRun>;
  finished(name: string, ms?: number): Promise<IssueRun>;
  hookEvents(run: string, uid?: string): Promise<EventView[]>;
  runPodNames(run: string): Promise<string[]>;
  createSecret(name: string, data: Record<string, string>): Promise<void>;
  createConfigMap(name: string, data: Record<string, string>): Promise<void>;
  /** A JSON merge patch of the object at `at` (`path.issueRuns(name)`, …), as the admin. */
  mergePatch(at: string, body: object): Promise<void>;
}

/**
 * What the chart installs besides the controller: the CRDs, the lorenz-system namespace and
 * config/rbac (the ServiceAccount and its ClusterRole), so that the controller's verbs are
 * the chart's. `repoRoot`: for a bundled caller, whose import.meta is not this file's.
 */
export async function installOperator(cp: ControlPlane, repoRoot = root): Promise<void> {
  const kubectl = (...args: string[]) =>
    exec(cp.tools.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args]);
  await installCrds(cp, lorenzCrdFiles(repoRoot));
  await kubectl('create', 'namespace', 'lorenz-system');
  const rbac = (await readdir(join(repoRoot, 'config/rbac'))).filter(
    (file) => file !== 'kustomization.yaml',
  );
  await kubectl('apply', ...rbac.flatMap((file) => ['-f', join(repoRoot, 'config/rbac', file)]));
}

/** The admin kubeconfig impersonating `user`: the apiserver authorizes as that user. */
export function impersonating(cp: ControlPlane, user: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(cp.kubeconfigPath);
  const current = config.getCurrentUser();
  if (!current) throw new Error(`no current user in the admin kubeconfig ${cp.kubeconfigPath}`);
  config.loadFromOptions({
    clusters: config.clusters,
    contexts: config.contexts,
    currentContext: config.currentContext,
    users: config.users.map((entry) =>
      entry.name === current.name ? { ...entry, impersonateUser: user } : entry,
    ),
  });
  return config;
}

/** The admin kubeconfig impersonating the controller's ServiceAccount (config/rbac's verbs). */
export const controllerKubeConfig = (cp: ControlPlane): KubeConfig =>
  impersonating(cp, CONTROLLER_USER);

/** The controller in-process as the chart runs it (one namespace, no signals, quiet). */
export const startTestController = (
  kubeConfig: KubeConfig,
  namespace: string,
  overrides: Partial<ControllerRunOptions> = {},
): Promise<RunningController> =>
  startController({
    kubeConfig,
    namespace,
    handleSignals: false,
    identity: 'it-controller',
    logger: createLogger({ level: process.env.LORENZ_IT_LOG ?? 'silent' }),
    ...overrides,
  });

/** The runner bundle and the scripted agent; `remove`, when they are the caller's to delete. */
export interface OperatorBundles {
  runner: string;
  scriptedAgent: string;
  remove?: () => Promise<void>;
}

/**
 * The operator image's own files, bundled from source into new folders run Pods (uid 65532)
 * can read: the runner and the scripted agent. `remove` deletes them.
 */
export async function buildOperatorBundles(repoRoot = root): Promise<Required<OperatorBundles>> {
  const bundleDir = await mkdtemp(join(tmpdir(), 'lorenz-operator-it-'));
  await chmod(bundleDir, 0o755);
  const runner = await buildRunnerBundle(bundleDir, repoRoot);
  const scriptedAgent = await buildScriptedAgent(
    join(repoRoot, 'test/fixtures/scripted-agent/main.ts'),
  );
  await chmod(dirname(scriptedAgent), 0o755);
  return {
    runner,
    scriptedAgent,
    async remove() {
      await rm(bundleDir, { recursive: true, force: true });
      await rm(dirname(scriptedAgent), { recursive: true, force: true });
    },
  };
}

/**
 * `repoRoot`: for a bundled caller (a benchmark), whose import.meta is not this file's.
 * `bundles`: the runner and scripted agent built already (the tier's global setup), kept on
 * stop; without them they are built here and removed on stop.
 */
export async function startOperatorEnv(
  repoRoot = root,
  bundles?: OperatorBundles,
): Promise<OperatorEnv> {
  // The garbage collector: owner references cascade (a deleted IssueRun takes its Pods).
  const cp = await startControlPlane({ controllers: ['garbage-collector-controller'] });
  const kubectl = async (...args: string[]) =>
    (await exec(cp.tools.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args])).stdout;
  await installOperator(cp, repoRoot);
  // No serviceaccount controller runs here: ServiceAccount admission needs the default one.
  await kubectl('-n', NAMESPACE, 'create', 'serviceaccount', 'default');

  // Run Pods run as uid 65532: what they read must be readable by others.
  await providePodNode(repoRoot);
  const built = bundles ?? (await buildOperatorBundles(repoRoot));
  const { runner, scriptedAgent } = built;
  const node = await startProcessNode({
    controlPlane: cp,
    // The operator image as the Dockerfile builds it: the runner and the scripted agent.
    imageMap: { [DEFAULT_OPERATOR_IMAGE]: operatorImageFiles(runner, scriptedAgent, repoRoot) },
  });

  const admin = createKubeClient(cp.kubeConfig);
  const controllerConfig = controllerKubeConfig(cp);

  const env: OperatorEnv = {
    cp,
    node,
    admin,
    controllerConfig,
    scriptedAgent,
    controller: undefined,
    kubectl,
    async startController(overrides = {}) {
      env.controller = await startTestController(controllerConfig, NAMESPACE, overrides);
      return env.controller;
    },
    workflowText: (options) => workflowText(env, options),
    createWorkflow: (name, text, extra) => createWorkflow(env, name, text, extra),
    createIssueRun: (name, workflow, issue, spec) =>
      createIssueRun(env, name, workflow, issue, spec),
    getRun: (name) => getRun(env, name),
    finished: (name, ms) => finished(env, name, ms),
    hookEvents: (run, uid) => hookEvents(env, run, uid),
    runPodNames: (run) => runPodNames(env, run),
    createSecret: (name, data) => createSecret(env, name, data),
    createConfigMap: (name, data) => createConfigMap(env, name, data),
    async mergePatch(at, body) {
      await admin.request({ method: 'PATCH', path: at, patchType: 'merge', body });
    },
    async stop() {
      await env.controller?.stop();
      await node.stop();
      admin.close();
      await cp.stop();
      if (!bundles) await built.remove?.();
    },
  };
  return env;
}

/** The controller's options for `useOperatorEnv`: given, or made once the environment is up. */
export type ControllerSetup =
  | Partial<ControllerRunOptions>
  | ((env: OperatorEnv) => Partial<ControllerRunOptions> | Promise<Partial<ControllerRunOptions>>);

/**
 * What a describe block starts in a beforeAll and stops in its afterAll, used as itself in the
 * tests and in the hooks declared after it: `const linear = useStarted('the Linear stand-in',
 * () => startLinearStandIn(…), (it) => it.close())`. afterAll hooks run in reverse (vitest's
 * `sequence.hooks` is 'stack'): what is declared first stops last.
 */
export function useStarted<T extends object>(
  what: string,
  start: () => Promise<T>,
  stop: (value: T) => Promise<void>,
): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await start();
  });
  afterAll(async () => {
    if (value) await stop(value);
  });
  const started = (): T => {
    if (!value) throw new Error(`${what} is not started`);
    return value;
  };
  // Not a thenable: `await` of a value holding it does not look for a `then` before the start.
  return new Proxy({} as T, {
    get: (_target, key) => (key === 'then' ? undefined : Reflect.get(started(), key)),
    set: (_target, key, next) => Reflect.set(started(), key, next),
  });
}

/**
 * One operator environment for a describe block (`useStarted`): `const env = useOperatorEnv();`.
 * The controller is started as the chart runs it, with `controller`'s options (a function runs
 * first, against the environment, e.g. to label its namespace); `false`: the tests start it.
 */
export function useOperatorEnv(controller: ControllerSetup | false = {}): OperatorEnv {
  return useStarted(
    'the operator environment',
    async () => {
      const env = await startOperatorEnv(root, inject('operatorBundles'));
      try {
        if (controller !== false)
          await env.startController(
            typeof controller === 'function' ? await controller(env) : controller,
          );
      } catch (error) {
        await env.stop();
        throw error;
      }
      return env;
    },
    (env) => env.stop(),
  );
}

/** The Linear stand-in on its fixture data, answering to `apiKey`, for a describe block. */
export const useLinearStandIn = (apiKey: string): LinearStandIn =>
  useStarted(
    'the Linear stand-in',
    () => startLinearStandIn(fixtureData(), apiKey),
    (linear) => linear.close(),
  );

/**
 * A Workflow on the Linear stand-in's project alpha1 at `endpoint`, polled every second, with
 * the API key in the Secret `secretName` (made here); `options` add to its WORKFLOW.md.
 */
export async function createLinearWorkflow(
  env: OperatorEnv,
  name: string,
  linear: { endpoint: string; secretName: string; apiKey: string },
  options: WorkflowOptions = {},
): Promise<void> {
  await env.createSecret(linear.secretName, { api_key: linear.apiKey });
  await env.createWorkflow(
    name,
    {
      trackerKind: 'linear',
      tracker: `  endpoint: ${linear.endpoint}\n  project_slug: alpha1`,
      pollingMs: 1000,
      ...options,
    },
    { trackerSecretRef: { name: linear.secretName } },
  );
}

/** The GitHub stand-in with one issue to work on (#7, lorenz:todo), for a describe block. */
export const useGithubStandIn = (): GithubStandIn =>
  useStarted(
    'the GitHub stand-in',
    () =>
      startGithubStandIn({
        issues: [{ number: 7, title: 'Tidy the README', labels: ['lorenz:todo'] }],
      }),
    (github) => github.close(),
  );

/** A pino logger at debug level whose lines (JSON) go to `lines`: what the controller logs. */
export function capturedLogger(lines: string[]): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return pino({ level: 'debug' }, sink);
}

/** The controller's agent-tools gateway on a fixed port (a restarted controller keeps it). */
export const gatewayOptions = (port: number) => ({
  toolsBindAddress: `127.0.0.1:${port}`,
  toolsUrl: `http://127.0.0.1:${port}/mcp`,
});

/** A Secret of string data in the test namespace, as `kubectl create secret generic` makes it. */
export async function createSecret(
  env: OperatorEnv,
  name: string,
  data: Record<string, string>,
): Promise<void> {
  const literals = Object.entries(data).map(([key, value]) => `--from-literal=${key}=${value}`);
  await env.kubectl('create', 'secret', 'generic', name, '-n', NAMESPACE, ...literals);
}

/** A WORKFLOW.md with the scripted agent, as the init container installs it, as the bridge. */
export const workflowText = (_env: OperatorEnv, options: WorkflowOptions = {}): string =>
  scriptedWorkflowText(
    `${join(NODE_BIN, 'node')} ${RUN_POD_PATHS.runnerBin}/${SCRIPTED_AGENT_FILE}`,
    options,
  );

export const podTemplate = {
  spec: {
    containers: [
      {
        name: 'agent',
        image: 'lorenz-test/agent:1',
        env: [{ name: 'PATH', value: `${NODE_BIN}:/usr/local/bin:/usr/bin:/bin` }],
      },
    ],
  },
};

/** The test podTemplate, its agent container given more `env` (after its own) and `envFrom`. */
export function agentPodTemplate(more: { env?: V1EnvVar[]; envFrom?: V1EnvFromSource[] }) {
  const [agent] = podTemplate.spec.containers;
  const container = { ...agent, env: [...(agent?.env ?? []), ...(more.env ?? [])] };
  return {
    spec: { containers: [more.envFrom ? { ...container, envFrom: more.envFrom } : container] },
  };
}

/**
 * A copy of a TLS server's CA in a new directory under `prefix` that run Pods can read (they
 * run as uid 65532), and the agent env that makes git trust it alone.
 */
export async function sharedCa(
  caFile: string,
  prefix: string,
): Promise<{ dir: string; gitEnv: V1EnvVar[] }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  await copyFile(caFile, join(dir, 'ca.pem'));
  await chmod(join(dir, 'ca.pem'), 0o644);
  const gitEnv = [
    { name: 'GIT_SSL_CAINFO', value: join(dir, 'ca.pem') },
    { name: 'GIT_CONFIG_NOSYSTEM', value: '1' },
  ];
  return { dir, gitEnv };
}

export const path = {
  workflows: (name = '') =>
    `/apis/lorenz.dev/v1alpha1/namespaces/${NAMESPACE}/workflows${name ? `/${name}` : ''}`,
  issueRuns: (name = '') =>
    `/apis/lorenz.dev/v1alpha1/namespaces/${NAMESPACE}/issueruns${name ? `/${name}` : ''}`,
  pods: `/api/v1/namespaces/${NAMESPACE}/pods`,
  configMaps: (name = '') => `/api/v1/namespaces/${NAMESPACE}/configmaps${name ? `/${name}` : ''}`,
  events: `/apis/events.k8s.io/v1/namespaces/${NAMESPACE}/events`,
};

/** POSTs `body` to `path` as the admin (a create; refused if it exists). */
export async function createObject(env: OperatorEnv, at: string, body: object): Promise<void> {
  await env.admin.request({ method: 'POST', path: at, body });
}

/** A Workflow of `spec` as given (add the test `podTemplate` to it yourself). */
export const createWorkflowOf = (env: OperatorEnv, name: string, spec: object): Promise<void> =>
  createObject(env, path.workflows(), {
    apiVersion: 'lorenz.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name },
    spec,
  });

/**
 * A Workflow with its WORKFLOW.md inline and the test `podTemplate`: `workflow` is the text, or
 * the options that `workflowText` writes it from.
 */
export const createWorkflow = (
  env: OperatorEnv,
  name: string,
  workflow: string | WorkflowOptions,
  extra: object = {},
): Promise<void> =>
  createWorkflowOf(env, name, {
    workflow: typeof workflow === 'string' ? workflow : workflowText(env, workflow),
    podTemplate,
    ...extra,
  });

/** A Workflow that reads its WORKFLOW.md from the key WORKFLOW.md of ConfigMap `configMap`. */
export const createWorkflowFromConfigMap = (
  env: OperatorEnv,
  name: string,
  configMap: string,
): Promise<void> =>
  createWorkflowOf(env, name, {
    workflowFrom: { configMapKeyRef: { name: configMap, key: 'WORKFLOW.md' } },
    podTemplate,
  });

/** A ConfigMap of `data` (a WORKFLOW.md: `{ 'WORKFLOW.md': text }`). */
export const configMapManifest = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data,
});

export const createConfigMap = (
  env: OperatorEnv,
  name: string,
  data: Record<string, string>,
): Promise<void> => createObject(env, path.configMaps(), configMapManifest(name, data));

/** An IssueRun of `workflow` for `issue` (in state Todo unless the issue says otherwise). */
export const issueRunManifest = (
  name: string,
  workflow: string,
  issue: object,
  spec: object = {},
) => ({
  apiVersion: 'lorenz.dev/v1alpha1',
  kind: 'IssueRun',
  metadata: { name },
  spec: { workflowRef: { name: workflow }, issue: { state: 'Todo', ...issue }, ...spec },
});

export async function createIssueRun(
  env: OperatorEnv,
  name: string,
  workflow: string,
  issue: object,
  spec: object = {},
): Promise<void> {
  await createObject(env, path.issueRuns(), issueRunManifest(name, workflow, issue, spec));
}

export const getRun = (env: OperatorEnv, name: string) =>
  env.admin.request<IssueRun>({ path: path.issueRuns(name) });

export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 90_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: string | undefined;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = String(error);
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Waits until the run is Finished and returns it. A timeout says where the run was last seen
 * (its conditions, slots and Pods), so that a run stuck under load can be told apart.
 */
export async function finished(env: OperatorEnv, name: string, ms?: number): Promise<IssueRun> {
  let seen = 'never read';
  try {
    return await until(
      `IssueRun ${name} to finish`,
      async () => {
        const run = await getRun(env, name);
        seen = lastSeen(run);
        return run.status?.conditions?.some((c) => c.type === 'Finished' && c.status === 'True')
          ? run
          : undefined;
      },
      ms,
    );
  } catch (error) {
    const pods = await env.kubectl('get', 'pods', '-n', NAMESPACE, '-o', 'wide').catch(String);
    throw new Error(`${(error as Error).message}; last seen: ${seen}; pods:\n${pods}`, {
      cause: error,
    });
  }
}

function lastSeen(run: IssueRun): string {
  const conditions = (run.status?.conditions ?? []).map(
    (c) => `${c.type}=${c.status} (${c.reason}: ${c.message})`,
  );
  return JSON.stringify({
    cancelRequested: run.spec.cancelRequested ?? false,
    conditions,
    slots: run.status?.slots,
  });
}

export interface EventView {
  metadata: { name: string };
  reason: string;
  note: string;
  regarding: { name: string; uid?: string };
}

/** The hook Events of a run in record order; with `uid`, only those of that run object. */
export async function hookEvents(
  env: OperatorEnv,
  run: string,
  uid?: string,
): Promise<EventView[]> {
  const list = await env.admin.request<{ items: EventView[] }>({ path: path.events });
  return (
    list.items
      // Hook records only: a run's life has Events of its own (AttemptStarted, RunSucceeded, …).
      .filter((event) => event.reason.startsWith('Hook'))
      .filter((event) => event.regarding.name === run && (!uid || event.regarding.uid === uid))
      .sort(
        (a, b) =>
          Number(a.metadata.name.split('-').at(-1)) - Number(b.metadata.name.split('-').at(-1)),
      )
  );
}

/** Each hook Event as `Reason:hook` (HookStarted:after_run), in the order given. */
export const hookRecords = (events: EventView[]): string[] =>
  events.map((event) => `${event.reason}:${event.note.split(' ')[0]}`);

/** A command for each of the four hooks, each one that succeeds, `over` in place of some. */
export const fourHooks = (
  over: Partial<Record<HookName, string>> = {},
): Record<HookName, string> => ({
  after_create: 'echo created',
  before_run: 'echo ready',
  after_run: 'echo after',
  before_remove: 'echo bye',
  ...over,
});

/** The hook records of an attempt whose four hooks each started and succeeded once. */
export const FOUR_HOOKS_SUCCEEDED = [
  'HookStarted:after_create',
  'HookSucceeded:after_create',
  'HookStarted:before_run',
  'HookSucceeded:before_run',
  'HookStarted:after_run',
  'HookSucceeded:after_run',
  'HookStarted:before_remove',
  'HookSucceeded:before_remove',
];

export async function runPodNames(env: OperatorEnv, run: string): Promise<string[]> {
  const list = await env.admin.request<{
    items: { metadata: { name: string; labels?: Record<string, string> } }[];
  }>({
    path: path.pods,
    query: { labelSelector: `lorenz.dev/issuerun=${run}` },
  });
  return list.items.map((pod) => pod.metadata.name);
}
