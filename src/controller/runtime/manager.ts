import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { errorMessage } from '../../workflow/errors.js';
import { createKubeClient, type KubeClient, type ResourceRef } from './client.js';
import { createController, type Controller, type ControllerOptions } from './controller.js';
import { createInformer, type Informer, type KubeObject } from './informer.js';
import { createLeaderElector, type LeaderElectionOptions, type LeaderElector } from './leader.js';
import { silentLogger } from './logger.js';
import { createRuntimeMetrics, type RuntimeMetrics } from './metrics.js';
import { startHealthServer, startMetricsServer, type BoundServer, type Check } from './servers.js';
import { createWorkQueue, type WorkQueue } from './workqueue.js';

export interface ManagerOptions {
  kubeConfig: KubeConfig;
  /** Limit informers to one namespace; all namespaces when unset. */
  namespace?: string;
  /** Run controllers only while holding this Lease. */
  leaderElection?: Pick<
    LeaderElectionOptions,
    'namespace' | 'name' | 'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'
  > & {
    /** Release the lease on stop so a successor starts at once; default true. */
    releaseOnCancel?: boolean;
  };
  /** `host:port`, `:port` or `0` (off); default `0`. */
  metricsBindAddress?: string;
  /** `host:port`, `:port` or `0` (off); default `0`. */
  healthProbeBindAddress?: string;
  logger?: Logger;
  /** Stop gracefully on SIGTERM/SIGINT; default true. */
  handleSignals?: boolean;
  /** How long stop() waits for running reconciles; default 30 s. */
  gracefulShutdownTimeoutMs?: number;
}

export type ManagerExitReason = 'stopped' | 'signal';

export interface InformerRequest {
  /** Defaults to the manager's namespace. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  watchdogMs?: number;
}

export interface Manager {
  readonly kubeConfig: KubeConfig;
  readonly client: KubeClient;
  readonly namespace: string | undefined;
  readonly logger: Logger;
  readonly metrics: RuntimeMetrics;
  /** A shared informer (one per resource and selector); started by start(). */
  informer<T extends KubeObject>(resource: ResourceRef, options?: InformerRequest): Informer<T>;
  /** A work queue reporting the manager's metrics. */
  workQueue(name: string): WorkQueue;
  /** A controller with its own queue and the manager's metrics and logger, run while leading. */
  controller(
    options: Omit<ControllerOptions, 'queue' | 'metrics' | 'logger'> & { queue?: WorkQueue },
  ): Controller;
  addReadyCheck(name: string, check: Check): void;
  isLeader(): boolean;
  /**
   * Called when this replica stops leading: anything that writes outside a reconcile (log
   * followers writing Events) must stop too. Controllers are paused by the manager.
   */
  onLeadershipLost(callback: () => void): void;
  /** Starts servers, informers and leader election; resolves once they are started. */
  start(): Promise<void>;
  /** Resolves once every informer has synced. */
  waitForCacheSync(signal?: AbortSignal): Promise<void>;
  /** Graceful shutdown: controllers (in-flight reconciles finish), lease, informers, servers. */
  stop(reason?: ManagerExitReason): Promise<void>;
  /** Settles when the manager has stopped, with why. */
  readonly done: Promise<ManagerExitReason>;
  readonly metricsAddress: BoundServer['address'] | undefined;
  readonly healthAddress: BoundServer['address'] | undefined;
}

/**
 * Owns what a controller process runs: shared informers (every replica keeps its cache warm
 * so that a new leader starts at once), controllers (started only while leading and once the
 * caches have synced; paused at once when leadership is lost, their keys kept, and resumed
 * if this replica leads again: an apiserver outage longer than the renew deadline does not
 * end the process), the Lease, and the metrics and health servers.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createManager(options: ManagerOptions): Manager {
  const logger = options.logger ?? silentLogger();
  const client = createKubeClient(options.kubeConfig);
  const metrics = createRuntimeMetrics();
  const informers = new Map<string, Informer<KubeObject>>();
  const controllers: Controller[] = [];
  const readyChecks = new Map<string, Check>();
  const healthChecks = new Map<string, Check>([['ping', () => undefined]]);
  const servers: BoundServer[] = [];
  const leadershipLost: Array<() => void> = [];
  const startAbort = new AbortController();
  let elector: LeaderElector | undefined;
  let leading = !options.leaderElection;
  let stopping: Promise<void> | undefined;
  let started = false;
  let resolveDone: (reason: ManagerExitReason) => void = () => {};
  const done = new Promise<ManagerExitReason>((resolve) => (resolveDone = resolve));
  let metricsAddress: BoundServer['address'] | undefined;
  let healthAddress: BoundServer['address'] | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down');
    void manager.stop('signal');
  };

  readyChecks.set('informers', () => {
    const waiting = [...informers.keys()].filter((key) => !informers.get(key)?.hasSynced());
    return waiting.length > 0 ? `not synced: ${waiting.join(', ')}` : undefined;
  });

  async function startControllers(): Promise<void> {
    try {
      await manager.waitForCacheSync(startAbort.signal);
    } catch {
      return;
    }
    if (!leading || stopping) return;
    for (const controller of controllers) controller.start();
  }

  const manager: Manager = {
    kubeConfig: options.kubeConfig,
    client,
    namespace: options.namespace,
    logger,
    metrics,
    get metricsAddress() {
      return metricsAddress;
    },
    get healthAddress() {
      return healthAddress;
    },
    done,

    informer<T extends KubeObject>(
      resource: ResourceRef,
      request: InformerRequest = {},
    ): Informer<T> {
      const namespace = request.namespace ?? options.namespace;
      const key = [
        resource.group,
        resource.plural,
        namespace ?? '*',
        request.labelSelector ?? '',
        request.fieldSelector ?? '',
      ].join('|');
      let informer = informers.get(key);
      if (!informer) {
        informer = createInformer<KubeObject>({ client, resource, namespace, logger, ...request });
        informers.set(key, informer);
        if (started) informer.start();
      }
      return informer as Informer<T>;
    },

    workQueue: (name) => createWorkQueue({ name, metrics }),

    controller(controllerOptions) {
      const controller = createController({
        ...controllerOptions,
        queue:
          controllerOptions.queue ?? createWorkQueue({ name: controllerOptions.name, metrics }),
        metrics,
        logger,
      });
      controllers.push(controller);
      return controller;
    },

    addReadyCheck: (name, check) => void readyChecks.set(name, check),
    onLeadershipLost: (callback) => void leadershipLost.push(callback),
    isLeader: () => leading,

    async start() {
      const metricsServer = await startMetricsServer(
        options.metricsBindAddress ?? '0',
        metrics.registry,
      );
      const healthServer = await startHealthServer(options.healthProbeBindAddress ?? '0', {
        healthz: healthChecks,
        readyz: readyChecks,
      });
      for (const server of [metricsServer, healthServer]) if (server) servers.push(server);
      metricsAddress = metricsServer?.address;
      healthAddress = healthServer?.address;
      started = true;
      for (const informer of informers.values()) informer.start();
      if (options.handleSignals !== false) {
        process.once('SIGTERM', onSignal);
        process.once('SIGINT', onSignal);
      }
      const election = options.leaderElection;
      if (!election) {
        void startControllers();
        return;
      }
      elector = createLeaderElector({
        client,
        ...election,
        logger,
        metrics,
        onStartedLeading: () => {
          leading = true;
          void startControllers();
        },
        onStoppedLeading: () => {
          if (!leading) return;
          leading = false;
          // Stop writing at once: another replica may already be leading. Stay up and stand
          // again: the caches stay warm and the queued keys wait for the next term.
          for (const controller of controllers) void controller.pause();
          for (const callback of leadershipLost) callback();
        },
      });
      void elector.run();
    },

    async waitForCacheSync(signal) {
      await Promise.all([...informers.values()].map((informer) => informer.waitForSync(signal)));
    },

    stop(reason = 'stopped') {
      stopping ??= (async () => {
        startAbort.abort();
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        const timeoutMs = options.gracefulShutdownTimeoutMs ?? 30_000;
        const drained = Promise.all(controllers.map((controller) => controller.stop()));
        const timedOut = await Promise.race([
          drained.then(() => false),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(true), timeoutMs).unref()),
        ]);
        if (timedOut)
          logger.warn({ timeoutMs }, 'reconciles still running at the shutdown deadline');
        // Release only after the controllers stopped writing, so the next leader never overlaps.
        await elector?.stop({ release: options.leaderElection?.releaseOnCancel !== false });
        await Promise.all([...informers.values()].map((informer) => informer.stop()));
        await Promise.all(servers.splice(0).map((server) => server.close()));
        client.close();
        logger.info({ reason }, 'manager stopped');
      })().catch((error: unknown) =>
        logger.error({ err: error }, `shutdown failed: ${errorMessage(error)}`),
      );
      void stopping.then(() => resolveDone(reason));
      return stopping;
    },
  };
  return manager;
}
