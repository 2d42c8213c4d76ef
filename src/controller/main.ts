import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import type { IssueRun, Workflow } from '../api/index.js';
import { CONFIGMAPS, PODS, type KubeClient, type RequestOptions } from './runtime/client.js';
import { objectKey } from './runtime/informer.js';
import { createLogger, type Logger } from './runtime/logger.js';
import { createManager, type Manager, type ManagerExitReason } from './runtime/manager.js';
import { createEventRecorder } from './events/recorder.js';
import { DEFAULT_OPERATOR_IMAGE, LABEL_MANAGED_BY, MANAGED_BY } from './issuerun/constants.js';
import { createLogFollowers } from './issuerun/log-follower.js';
import { ISSUERUNS, createIssueRunReconciler, type PodObject } from './issuerun/reconciler.js';
import { createWorkflowConfigCache } from './issuerun/workflow-config.js';
import {
  WORKFLOWS,
  createWorkflowReconciler,
  type ConfigMapObject,
} from './workflow/reconciler.js';

export interface ControllerRunOptions {
  kubeConfig: KubeConfig;
  namespace?: string;
  leaderElect?: boolean;
  /** Where the Lease lives; default the watched namespace, else `default`. */
  leaderElectionNamespace?: string;
  metricsBindAddress?: string;
  healthProbeBindAddress?: string;
  /** The Lorenz image run Pods copy the runner from (LORENZ_OPERATOR_IMAGE, else the built-in tag). */
  operatorImage?: string;
  identity?: string;
  logger?: Logger;
  handleSignals?: boolean;
  /** Least time between two status writes of a running IssueRun. */
  progressIntervalMs?: number;
  podStatus?: { imagePullGraceMs?: number; pendingTimeoutMs?: number };
}

export interface RunningController {
  manager: Manager;
  /** Kubernetes API writes made by the reconcilers (creates, patches, deletes, Events). */
  writes(): number;
  /** The last writes as `METHOD path` (at most 1000), for accounting. */
  writeLog(): string[];
  stop(): Promise<void>;
  readonly done: Promise<ManagerExitReason>;
}

/** Counts the reconcilers' writes (for the API-writes target) without changing them. */
function countingClient(client: KubeClient): {
  client: KubeClient;
  writes: () => number;
  writeLog: () => string[];
} {
  let writes = 0;
  const log: string[] = [];
  return {
    client: {
      request<T>(options: RequestOptions): Promise<T> {
        if ((options.method ?? 'GET') !== 'GET') {
          writes += 1;
          log.push(`${options.method} ${options.path}`);
          if (log.length > 1000) log.shift();
        }
        return client.request<T>(options);
      },
      stream: (options) => client.stream(options),
      close: () => client.close(),
    },
    writes: () => writes,
    writeLog: () => [...log],
  };
}

const ownerKey = (pod: PodObject): string | undefined => {
  const owner = pod.metadata?.ownerReferences?.find(
    (reference) => reference.controller && reference.kind === 'IssueRun',
  );
  return owner ? `${pod.metadata?.namespace}/${owner.name}` : undefined;
};

/** Starts the manager with the Workflow and IssueRun controllers; resolves once started. */
export async function startController(options: ControllerRunOptions): Promise<RunningController> {
  const identity = options.identity ?? `${hostname()}-${randomBytes(4).toString('hex')}`;
  const logger = options.logger ?? createLogger({ base: { identity } });
  const leaseNamespace = options.leaderElectionNamespace ?? options.namespace ?? 'default';
  const manager = createManager({
    kubeConfig: options.kubeConfig,
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.leaderElect
      ? { leaderElection: { namespace: leaseNamespace, name: 'lorenz-controller', identity } }
      : {}),
    metricsBindAddress: options.metricsBindAddress ?? '0',
    healthProbeBindAddress: options.healthProbeBindAddress ?? '0',
    logger,
    handleSignals: options.handleSignals ?? true,
  });
  const { client, writes, writeLog } = countingClient(manager.client);
  const issueRuns = manager.informer<IssueRun>(ISSUERUNS);
  const workflows = manager.informer<Workflow>(WORKFLOWS);
  const pods = manager.informer<PodObject>(PODS, {
    labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY}`,
  });
  // User ConfigMaps that Workflows read from: everything but what Lorenz writes itself.
  const configMaps = manager.informer<ConfigMapObject>(CONFIGMAPS, {
    labelSelector: `${LABEL_MANAGED_BY}!=${MANAGED_BY}`,
  });

  let enqueueRun: (key: string) => void = () => {};
  const events = createEventRecorder({ client, reportingInstance: identity });
  const followers = createLogFollowers({
    client,
    logger,
    onHook: async (state, record) => {
      const run = issueRuns.get(state.namespace, state.runKey.slice(state.namespace.length + 1));
      if (!run?.metadata.uid) return;
      await events.recordHook({
        run: { name: run.metadata.name ?? '', namespace: state.namespace, uid: run.metadata.uid },
        podName: state.podName,
        slot: state.slot,
        attempt: state.attempt,
        seq: record.seq,
        message: record.message,
        now: new Date(),
      });
    },
    onProgress: (state) => enqueueRun(state.runKey),
  });
  const issueRunController = manager.controller({
    name: 'issuerun',
    concurrency: 32,
    reconcile: createIssueRunReconciler({
      client,
      issueRuns,
      workflows,
      pods,
      followers,
      loadWorkflowConfig: createWorkflowConfigCache(client),
      operatorImage:
        options.operatorImage ?? process.env.LORENZ_OPERATOR_IMAGE ?? DEFAULT_OPERATOR_IMAGE,
      now: () => new Date(),
      logger,
      ...(options.progressIntervalMs === undefined
        ? {}
        : { progressIntervalMs: options.progressIntervalMs }),
      ...(options.podStatus
        ? {
            podStatus: {
              imagePullGraceMs: 120_000,
              pendingTimeoutMs: 600_000,
              ...options.podStatus,
            },
          }
        : {}),
    }),
  });
  enqueueRun = (key) => issueRunController.enqueue(key);
  const workflowController = manager.controller({
    name: 'workflow',
    concurrency: 2,
    reconcile: createWorkflowReconciler({
      client,
      workflows,
      issueRuns,
      configMaps,
      now: () => new Date(),
      logger,
    }),
  });

  issueRuns.onAdd((run) => issueRunController.enqueue(objectKey(run)));
  issueRuns.onUpdate((_old, run) => issueRunController.enqueue(objectKey(run)));
  issueRuns.onDelete((run) => issueRunController.enqueue(objectKey(run)));
  const workflowOfRun = (run: IssueRun) => {
    workflowController.enqueue(`${run.metadata.namespace}/${run.spec.workflowRef.name}`);
  };
  issueRuns.onAdd(workflowOfRun);
  issueRuns.onUpdate((_old, run) => workflowOfRun(run));
  issueRuns.onDelete(workflowOfRun);
  for (const handler of [pods.onAdd, pods.onDelete]) {
    handler((pod) => {
      const key = ownerKey(pod);
      if (key) issueRunController.enqueue(key);
    });
  }
  pods.onUpdate((_old, pod) => {
    const key = ownerKey(pod);
    if (key) issueRunController.enqueue(key);
  });
  const onWorkflow = (workflow: Workflow) => {
    workflowController.enqueue(objectKey(workflow));
    // Runs waiting on this Workflow (not found, no valid config yet) look again.
    for (const run of issueRuns.list(workflow.metadata.namespace)) {
      if (run.spec.workflowRef.name === workflow.metadata.name && !run.status?.podName) {
        issueRunController.enqueue(objectKey(run));
      }
    }
  };
  workflows.onAdd(onWorkflow);
  workflows.onUpdate((_old, workflow) => onWorkflow(workflow));
  workflows.onDelete(onWorkflow);
  const onConfigMap = (configMap: ConfigMapObject) => {
    for (const workflow of workflows.list(configMap.metadata?.namespace)) {
      if (workflow.spec.workflowFrom?.configMapKeyRef.name === configMap.metadata?.name) {
        workflowController.enqueue(objectKey(workflow));
      }
    }
  };
  configMaps.onAdd(onConfigMap);
  configMaps.onUpdate((_old, configMap) => onConfigMap(configMap));
  configMaps.onDelete(onConfigMap);

  await manager.start();
  return {
    manager,
    writes,
    writeLog,
    done: manager.done,
    async stop() {
      followers.stopAll();
      await manager.stop('stopped');
    },
  };
}

export function parseControllerArgs(
  argv: string[],
): Omit<ControllerRunOptions, 'kubeConfig'> & { kubeconfig?: string } {
  const { values } = parseArgs({
    args: argv,
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string' },
      'leader-elect': { type: 'boolean', default: false },
      'leader-election-namespace': { type: 'string' },
      'metrics-bind-address': { type: 'string', default: ':8080' },
      'health-probe-bind-address': { type: 'string', default: ':8081' },
      'operator-image': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.namespace ? { namespace: values.namespace } : {}),
    leaderElect: values['leader-elect'],
    ...(values['leader-election-namespace']
      ? { leaderElectionNamespace: values['leader-election-namespace'] }
      : {}),
    metricsBindAddress: values['metrics-bind-address'],
    healthProbeBindAddress: values['health-probe-bind-address'],
    ...(values['operator-image'] ? { operatorImage: values['operator-image'] } : {}),
  };
}

/**
 * `lorenz controller`: runs until SIGTERM/SIGINT (0) or lost leadership (1, so that the
 * process restarts clean, as controller-runtime's managers do).
 */
export async function runController(options: ControllerRunOptions): Promise<number> {
  const running = await startController(options);
  const reason = await running.done;
  return reason === 'leadership-lost' ? 1 : 0;
}

export async function runControllerCommand(argv: string[]): Promise<number> {
  const { kubeconfig, ...options } = parseControllerArgs(argv);
  const kubeConfig = new KubeConfig();
  if (kubeconfig) kubeConfig.loadFromFile(kubeconfig);
  else kubeConfig.loadFromDefault();
  return runController({ ...options, kubeConfig });
}
