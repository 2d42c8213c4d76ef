import { priceTableOption, priceTableSource } from './price-table-flag.js';
import { FlagError, parseByteSize, parseDurationFlag } from './flag-values.js';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { countingClient } from './runtime/counting-client.js';
import { createLogger, type Logger } from './runtime/logger.js';
import { DEFAULT_LEASE } from './runtime/leader.js';
import { createManager, type Manager, type ManagerExitReason } from './runtime/manager.js';
import { handleShutdownSignals } from './runtime/shutdown.js';
import { setupIssueRunController } from './issuerun/setup.js';
import { createCodeHostCache } from './review/code-hosts.js';
import { setupInboxController } from './inbox/setup.js';
import { setupReviewController } from './review/setup.js';
import { podReader, resolveOperatorImage } from './shared/operator-image.js';
import {
  DEFAULT_POD_TEMPLATE_POLICY,
  type PodTemplatePolicy,
} from './shared/pod-template-check.js';
import { createTrackerCache } from './shared/trackers.js';
import { TOOLS_STOP_GRACE_MS } from '../tools/index.js';
import { setupToolsGateway } from './tools/setup.js';
import { setupWorkflowController } from './workflow/setup.js';
import { setupWarmController } from './warm/setup.js';
import { setupWebhookReceiver } from './webhooks/setup.js';
import { createWakeBoard, type WakeBoard } from './shared/wake.js';
import { setupArchiver, type Archiver } from './archive/setup.js';
import { defaultArchivePath, openArchive } from '../archive/dsn.js';
import type { ArchiveStore } from '../archive/types.js';

export interface ControllerRunOptions {
  kubeConfig: KubeConfig;
  namespace?: string;
  leaderElect?: boolean;
  /** Where the Lease lives; default the watched namespace, else `default`. */
  leaderElectionNamespace?: string;
  metricsBindAddress?: string;
  healthProbeBindAddress?: string;
  /**
   * The Lorenz image run Pods copy the runner from; else LORENZ_OPERATOR_IMAGE, else the
   * controller's own image read from its Pod (POD_NAME/POD_NAMESPACE), else the built-in tag.
   */
  operatorImage?: string;
  identity?: string;
  logger?: Logger;
  handleSignals?: boolean;
  /** Least time between two status writes of a running IssueRun. */
  progressIntervalMs?: number;
  podStatus?: { imagePullGraceMs?: number; pendingTimeoutMs?: number };
  /** How long an ended run Pod's log may be refused before its records come from its summary. */
  logLostAfterMs?: number;
  /** Service accounts a Workflow's podTemplate may name (their tokens are never mounted). */
  allowedServiceAccounts?: readonly string[];
  /** Where the agent-tools gateway listens (`0` or absent: not served). */
  toolsBindAddress?: string;
  /** The gateway URL run Pods are given; absent: runs get no tools (no token, no flags). */
  toolsUrl?: string;
  /** Where the webhook receiver listens (`0` or absent: not served; docs/webhooks.md). */
  webhookBindAddress?: string;
  /**
   * The run archive: a store (tests), or the DSN to open (`--archive-dsn`). Absent: the
   * archive is off (no finalizer on IssueRuns, nothing archived).
   */
  archive?: ArchiveStore | { dsn: string };
  /** Why the archive is off, said in the log at start (`--archive-dsn` absent or `off`). */
  archiveOff?: string;
  /** Most bytes kept of one Pod's log (head and tail); default 32 MiB. */
  archiveLogCapBytes?: number;
  /** How long a deletion waits for an archive that keeps failing; default 24 h. */
  archiveGiveUpAfterMs?: number;
  /** How long a superseded warm snapshot outlives its successor's readiness (tests make it short). */
  warmGcGraceMs?: number;
  /** Backoff of failed archive writes (tests make it short). */
  archiveRetry?: { baseMs: number; maxMs: number };
  /**
   * The price table's ConfigMap (`--price-table NAME`, docs/budgets.md): in `namespace`, else
   * the controller's own (POD_NAMESPACE), else the watched one. Absent: costs are not counted.
   */
  priceTable?: { name: string; namespace?: string };
  /** The clock budgets count days by (tests move it to the next day); the system's otherwise. */
  now?: () => Date;
}

/**
 * The shutdown budget, under the Pod's terminationGracePeriodSeconds (30 in the chart and
 * config/manager): tool calls in flight get 5 s, the reconciles in flight (their context is
 * aborted at once, so most end at their next request) 12 s, the Lease's release up to the
 * renew deadline (7 s); at 25 s from the signal the process exits whatever is left.
 */
export const SHUTDOWN_BUDGET = {
  toolCallsMs: TOOLS_STOP_GRACE_MS,
  reconcilesMs: 12_000,
  leaseReleaseMs: DEFAULT_LEASE.renewDeadlineMs,
  deadlineMs: 25_000,
} as const;

const WAITS_FOR =
  `tool calls in flight (at most ${SHUTDOWN_BUDGET.toolCallsMs / 1000} s), ` +
  `reconciles in flight (aborted, at most ${SHUTDOWN_BUDGET.reconcilesMs / 1000} s), ` +
  `the Lease's release (at most ${SHUTDOWN_BUDGET.leaseReleaseMs / 1000} s); ` +
  `exits by ${SHUTDOWN_BUDGET.deadlineMs / 1000} s whatever is left`;

export interface RunningController {
  manager: Manager;
  /** Kubernetes API writes made by the reconcilers (creates, patches, deletes, Events). */
  writes(): number;
  /** The last writes as `METHOD path` (at most 1000), for accounting. */
  writeLog(): string[];
  /**
   * Everything, in order: the gateway (no new tool calls), the log followers, the manager
   * (controllers drained, Lease released, informers, metrics and health servers, the
   * apiserver connections). Once it settles nothing of the controller holds the process.
   */
  stop(): Promise<void>;
  /** Settles when stop() has ended: on SIGTERM/SIGINT (handleSignals) or a call. */
  readonly done: Promise<ManagerExitReason>;
  /** The archive's store once open (the read API reads the one the archiver writes). */
  archiveStore(): ArchiveStore | undefined;
  /** The webhook receiver's port (useful with port 0); undefined when it is off. */
  webhookPort(): number | undefined;
  /** Where deliveries wake the controllers; the review controller subscribes to `review`. */
  readonly wakes: WakeBoard;
}

/** Starts the manager with the Workflow and IssueRun controllers; resolves once started. */
// eslint-disable-next-line max-lines-per-function -- the wiring of the whole controller, in start order; its stop mirrors it
export async function startController(options: ControllerRunOptions): Promise<RunningController> {
  const identity = options.identity ?? `${hostname()}-${randomBytes(4).toString('hex')}`;
  const logger = options.logger ?? createLogger({ base: { identity } });
  const leaseNamespace = options.leaderElectionNamespace ?? options.namespace ?? 'default';
  // Before anything listens: a controller that cannot tell its runner image stops here.
  const operatorImage = await resolveOperatorImage({
    flag: options.operatorImage,
    env: process.env,
    readPod: podReader(options.kubeConfig),
  });
  logger.info(
    { operatorImage: operatorImage.image, from: operatorImage.source },
    `run Pods copy the runner from ${operatorImage.image} (from ${operatorImage.source})`,
  );
  const manager = createManager({
    kubeConfig: options.kubeConfig,
    ...(options.namespace ? { namespace: options.namespace } : {}),
    ...(options.leaderElect
      ? { leaderElection: { namespace: leaseNamespace, name: 'lorenz-controller', identity } }
      : {}),
    metricsBindAddress: options.metricsBindAddress ?? '0',
    healthProbeBindAddress: options.healthProbeBindAddress ?? '0',
    logger,
    // Signals stop the whole controller (below), not only the manager: the gateway's
    // server alone kept the process up after "manager stopped" (issue 25).
    handleSignals: false,
    gracefulShutdownTimeoutMs: SHUTDOWN_BUDGET.reconcilesMs,
  });
  const { client, writes, writeLog } = countingClient(manager.client);
  const archiver = options.archive ? startArchiver(manager, options, identity) : undefined;
  if (!archiver) {
    logger.info(
      { archive: 'off' },
      `the run archive is off${options.archiveOff ? `: ${options.archiveOff}` : ''}`,
    );
  }
  const podTemplatePolicy: PodTemplatePolicy = {
    allowedServiceAccounts:
      options.allowedServiceAccounts ?? DEFAULT_POD_TEMPLATE_POLICY.allowedServiceAccounts,
  };
  // The gateway first: a port chosen by the OS (`:0`, tests) must be known to give run Pods
  // their URL. Tool calls use the uncounted client: they are the agent's writes, not the
  // reconcilers'.
  // One adapter per Workflow, read by the polls and written by the agents' tools.
  const trackers = createTrackerCache(manager.client);
  const priceTable = priceTableSource(options, manager.client, logger);
  const tools =
    options.toolsBindAddress && options.toolsBindAddress !== '0'
      ? await setupToolsGateway(manager, {
          client: manager.client,
          logger,
          identity,
          bindAddress: options.toolsBindAddress,
          trackers,
          priceTable,
          now: options.now,
        })
      : undefined;
  const toolsUrl =
    options.toolsUrl ??
    (tools && /^(127\.0\.0\.1|localhost)?:/.test(options.toolsBindAddress ?? '')
      ? `http://127.0.0.1:${tools.port}/mcp`
      : undefined);
  // One board: the receiver wakes, the Workflow controller (poll) and the review side listen.
  const wakes = createWakeBoard();
  const webhooks =
    options.webhookBindAddress && options.webhookBindAddress !== '0'
      ? await setupWebhookReceiver(manager, {
          client: manager.client,
          logger,
          bindAddress: options.webhookBindAddress,
          board: wakes,
        })
      : undefined;
  const issueRuns = setupIssueRunController(manager, {
    client,
    identity,
    logger,
    operatorImage: operatorImage.image,
    podTemplatePolicy,
    progressIntervalMs: options.progressIntervalMs,
    podStatus: options.podStatus,
    logLostAfterMs: options.logLostAfterMs,
    toolsUrl,
    ...(archiver ? { onLogLine: archiver.logSink } : {}),
    priceTable,
    now: options.now,
  });
  // The review loop writes run statuses through the IssueRun controller's store: one store,
  // so neither controller wipes the other's writes.
  setupReviewController(manager, {
    client,
    identity,
    logger,
    store: issueRuns.store,
    trackers,
    codeHost: createCodeHostCache(client),
    wakes,
  });
  setupInboxController(manager, {
    client,
    identity,
    logger,
    store: issueRuns.store,
    trackers,
    wakes,
  });
  setupWorkflowController(manager, {
    client,
    logger,
    podTemplatePolicy,
    trackers,
    identity,
    ...(archiver ? { runFinalizers: archiver.finalizers } : {}),
    wakes,
    priceTable,
    now: options.now,
  });
  // The Workflows' warm workspaces (docs/snapshots.md#warm-workspaces): status.warm only.
  setupWarmController(manager, {
    client,
    logger,
    operatorImage: operatorImage.image,
    podTemplatePolicy,
    identity,
    now: options.now,
    gcGraceMs: options.warmGcGraceMs,
  });

  let stopping: Promise<void> | undefined;
  let resolveDone: (reason: ManagerExitReason) => void = () => {};
  const done = new Promise<ManagerExitReason>((resolve) => (resolveDone = resolve));
  const stopAll = (reason: ManagerExitReason): Promise<void> =>
    (stopping ??= (async () => {
      // The gateway first: it reads the informers and the client the manager closes.
      await tools?.stop(SHUTDOWN_BUDGET.toolCallsMs);
      await webhooks?.stop();
      issueRuns.stop();
      await manager.stop(reason);
      // A reconcile drained just now may have opened a log stream.
      issueRuns.stop();
      await archiver?.stop();
      resolveDone(reason);
    })());
  const signals =
    options.handleSignals === false
      ? undefined
      : handleShutdownSignals({
          logger,
          stop: () => stopAll('signal'),
          waitsFor: WAITS_FOR,
          deadlineMs: SHUTDOWN_BUDGET.deadlineMs,
        });

  try {
    await manager.start();
  } catch (error) {
    // A port taken, say: what did start (the gateway's listener) must not keep the process.
    signals?.dispose();
    await stopAll('stopped');
    throw error;
  }
  return {
    manager,
    writes,
    writeLog,
    done,
    archiveStore: () => archiver?.store(),
    webhookPort: () => webhooks?.port,
    wakes,
    async stop() {
      signals?.dispose();
      await stopAll('stopped');
    },
  };
}

/** The archiver on the manager, with the store given or opened from its DSN. */
function startArchiver(
  manager: Manager,
  options: ControllerRunOptions,
  identity: string,
): Archiver | undefined {
  const archive = options.archive;
  if (!archive) return undefined;
  return setupArchiver(manager, {
    client: manager.client,
    logger: manager.logger,
    identity,
    open: 'dsn' in archive ? () => openArchive(archive.dsn) : async () => archive,
    ...(options.archiveLogCapBytes === undefined
      ? {}
      : { logCapBytes: options.archiveLogCapBytes }),
    ...(options.archiveGiveUpAfterMs === undefined
      ? {}
      : { giveUpAfterMs: options.archiveGiveUpAfterMs }),
    ...(options.archiveRetry ? { retry: options.archiveRetry } : {}),
  });
}

export { FlagError, parseByteSize, parseDurationFlag } from './flag-values.js';

/**
 * `--archive-dsn`: a DSN, or `off`. Without it a laptop archives to the user's cache
 * directory; in a cluster (KUBERNETES_SERVICE_HOST set) the archive is off unless asked for:
 * a Pod's file system would lose it at the next restart (the chart passes the flag).
 */
export function archiveOption(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): Pick<ControllerRunOptions, 'archive' | 'archiveOff'> {
  if (flag === 'off') return { archiveOff: '--archive-dsn=off' };
  if (flag !== undefined) {
    if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(flag)) {
      throw new FlagError(
        `--archive-dsn ${JSON.stringify(flag)}: expected sqlite:PATH, postgres://… or off`,
      );
    }
    return { archive: { dsn: flag } };
  }
  if (env.KUBERNETES_SERVICE_HOST) {
    return { archiveOff: 'no --archive-dsn in a cluster (give sqlite:PATH or postgres://…)' };
  }
  return { archive: { dsn: `sqlite:${defaultArchivePath()}` } };
}

/** `a, b,,c` → [a, b, c]. */
const splitList = (text: string): string[] =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** The flags `lorenz controller` parses (their help: cli/command-help.ts). */
export const CONTROLLER_OPTIONS = {
  kubeconfig: { type: 'string' },
  namespace: { type: 'string' },
  'leader-elect': { type: 'boolean', default: false },
  'leader-election-namespace': { type: 'string' },
  'metrics-bind-address': { type: 'string', default: ':8080' },
  'health-probe-bind-address': { type: 'string', default: ':8081' },
  'operator-image': { type: 'string' },
  'allowed-service-accounts': { type: 'string' },
  'tools-bind-address': { type: 'string', default: ':8090' },
  'tools-url': { type: 'string' },
  'webhook-bind-address': { type: 'string', default: '0' },
  'archive-dsn': { type: 'string' },
  'archive-log-cap': { type: 'string' },
  'archive-give-up-after': { type: 'string' },
  'price-table': { type: 'string' },
} as const;

export function parseControllerArgs(
  argv: string[],
): Omit<ControllerRunOptions, 'kubeConfig'> & { kubeconfig?: string } {
  const { values } = parseArgs({
    args: argv,
    options: CONTROLLER_OPTIONS,
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
    ...(values['allowed-service-accounts'] === undefined
      ? {}
      : { allowedServiceAccounts: splitList(values['allowed-service-accounts']) }),
    ...toolsOptions(
      values['tools-bind-address'],
      values['tools-url'],
      values['leader-election-namespace'],
    ),
    webhookBindAddress: values['webhook-bind-address'],
    ...priceTableOption(values['price-table']),
    ...archiveOption(values['archive-dsn'], process.env),
    ...(values['archive-log-cap'] === undefined
      ? {}
      : { archiveLogCapBytes: parseByteSize('--archive-log-cap', values['archive-log-cap']) }),
    ...(values['archive-give-up-after'] === undefined
      ? {}
      : {
          archiveGiveUpAfterMs: parseDurationFlag(
            '--archive-give-up-after',
            values['archive-give-up-after'],
          ),
        }),
  };
}

/** Where an in-cluster process finds its own namespace (as client-go does). */
const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The namespace the controller runs in, for the gateway's default Service URL: the service
 * account's in a cluster, else the Lease's (the chart puts it there), else the chart's default.
 */
export function controllerNamespace(
  leaseNamespace: string | undefined,
  read: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): string {
  try {
    const own = read(SERVICE_ACCOUNT_NAMESPACE_FILE).trim();
    if (own) return own;
  } catch {
    // not in a cluster
  }
  return leaseNamespace ?? 'lorenz-system';
}

/** `--tools-bind-address 0` turns tools off: no gateway, so no URL for run Pods either. */
function toolsOptions(
  bindAddress: string,
  url: string | undefined,
  leaseNamespace: string | undefined,
): Pick<ControllerRunOptions, 'toolsBindAddress' | 'toolsUrl'> {
  if (bindAddress === '0') return { toolsBindAddress: '0' };
  return {
    toolsBindAddress: bindAddress,
    toolsUrl: url ?? `http://lorenz-tools.${controllerNamespace(leaseNamespace)}.svc:8090/mcp`,
  };
}

/**
 * `lorenz controller`: runs until SIGTERM/SIGINT, then stops everything it started and
 * returns 0; the process ends because nothing is left open (SHUTDOWN_BUDGET bounds the wait;
 * a second signal exits at once). A replica that loses its lease stays up as a candidate.
 */
export async function runController(options: ControllerRunOptions): Promise<number> {
  const running = await startController(options);
  const reason = await running.done;
  switch (reason) {
    case 'stopped':
    case 'signal':
      return 0;
  }
}

export async function runControllerCommand(argv: string[]): Promise<number> {
  const { kubeconfig, ...options } = parseControllerArgs(argv);
  const kubeConfig = new KubeConfig();
  if (kubeconfig) kubeConfig.loadFromFile(kubeconfig);
  else kubeConfig.loadFromDefault();
  return runController({ ...options, kubeConfig });
}
