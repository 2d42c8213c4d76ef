import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The metrics of the runtime, named as controller-runtime names them so that existing
 * dashboards and alerts (reconcile errors, queue depth, leader status) work unchanged.
 * One registry per manager: two managers in one process (tests) do not collide.
 */
export interface RuntimeMetrics {
  registry: Registry;
  reconcileTotal: Counter<'controller' | 'result'>;
  reconcileErrors: Counter<'controller'>;
  reconcileTime: Histogram<'controller'>;
  activeWorkers: Gauge<'controller'>;
  maxConcurrentReconciles: Gauge<'controller'>;
  workqueueDepth: Gauge<'name' | 'controller'>;
  workqueueAdds: Counter<'name' | 'controller'>;
  workqueueQueueDuration: Histogram<'name' | 'controller'>;
  workqueueWorkDuration: Histogram<'name' | 'controller'>;
  workqueueRetries: Counter<'name' | 'controller'>;
  workqueueUnfinishedWork: Gauge<'name' | 'controller'>;
  workqueueLongestRunning: Gauge<'name' | 'controller'>;
  leaderStatus: Gauge<'name'>;
  /** A queue reports the start times of what its workers hold, read at each scrape. */
  trackQueue(probe: QueueProbe): () => void;
}

/** What a work queue tells the metrics about the items its workers are processing. */
export interface QueueProbe {
  labels: { name: string; controller: string };
  /** When each item in process started, on the queue's clock (ms). */
  inFlightSince(): Iterable<number>;
  now(): number;
}

// controller-runtime's buckets: 5 ms … ~16 min for reconciles, 1 µs … 10 s ×10 for queues.
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
  1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
const QUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createRuntimeMetrics(options: { defaultMetrics?: boolean } = {}): RuntimeMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const queueLabels = ['name', 'controller'] as const;
  const probes = new Set<QueueProbe>();
  // Read at scrape time, as client-go computes them: how long the items in process have been
  // at it, in all and at most. A stuck reconcile shows here while it is stuck, not after.
  const inFlight = (pick: (ages: number[]) => number) =>
    function collect(this: Gauge<'name' | 'controller'>): void {
      for (const probe of probes) {
        const now = probe.now();
        const ages = [...probe.inFlightSince()].map((since) => (now - since) / 1000);
        this.set(probe.labels, ages.length === 0 ? 0 : pick(ages));
      }
    };
  return {
    trackQueue(probe) {
      probes.add(probe);
      return () => void probes.delete(probe);
    },
    registry,
    reconcileTotal: new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    }),
    reconcileTime: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
    activeWorkers: new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    }),
    maxConcurrentReconciles: new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    }),
    workqueueDepth: new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: queueLabels,
      registers,
    }),
    workqueueAdds: new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: queueLabels,
      registers,
    }),
    workqueueQueueDuration: new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: queueLabels,
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    workqueueWorkDuration: new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: queueLabels,
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    workqueueRetries: new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: queueLabels,
      registers,
    }),
    workqueueUnfinishedWork: new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labelNames: queueLabels,
      collect: inFlight((ages) => ages.reduce((sum, age) => sum + age, 0)),
      registers,
    }),
    workqueueLongestRunning: new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: queueLabels,
      collect: inFlight((ages) => Math.max(...ages)),
      registers,
    }),
    leaderStatus: new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master',
      labelNames: ['name'],
      registers,
    }),
  };
}
