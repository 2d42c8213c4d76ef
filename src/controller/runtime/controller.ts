import type { Logger } from 'pino';
import { errorMessage } from '../../workflow/errors.js';
import type { RuntimeMetrics } from './metrics.js';
import type { WorkQueue } from './workqueue.js';

/** What a reconcile asks for: nothing (done), or to look again after a delay. */
export type ReconcileResult = { requeueAfter?: number } | void;

export interface ReconcileContext {
  /** Aborted when the controller stops (shutdown or lost leadership): stop writing. */
  signal: AbortSignal;
}

export interface ControllerOptions {
  name: string;
  queue: WorkQueue;
  /** Reconciles one `namespace/name`; a throw retries the key with backoff. */
  reconcile: (key: string, context: ReconcileContext) => Promise<ReconcileResult>;
  /** Keys reconciled at once (never the same key twice); default 1. */
  concurrency?: number;
  metrics?: RuntimeMetrics;
  logger?: Logger;
}

export interface Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  /** Queues a key; what informer handlers call. */
  enqueue(key: string): void;
  /** Starts the workers. */
  start(): void;
  /** Stops handing out keys, aborts the context, waits for running reconciles. */
  stop(): Promise<void>;
  readonly running: boolean;
}

/**
 * Workers pulling keys from a queue: success forgets the key's backoff, an error re-queues
 * it with backoff, `requeueAfter` re-queues it after the delay (and forgets the backoff, as
 * controller-runtime does). The queue guarantees one worker per key.
 */
export function createController(options: ControllerOptions): Controller {
  const { name, queue, reconcile, metrics } = options;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const logger = options.logger?.child({ controller: name });
  const abort = new AbortController();
  let workers: Promise<void>[] = [];
  let running = false;

  async function reconcileOne(key: string): Promise<void> {
    const started = performance.now();
    metrics?.activeWorkers.inc({ controller: name });
    try {
      const result = await reconcile(key, { signal: abort.signal });
      const requeueAfter = result?.requeueAfter;
      queue.forget(key);
      if (requeueAfter !== undefined && requeueAfter > 0) {
        queue.addAfter(key, requeueAfter);
        metrics?.reconcileTotal.inc({ controller: name, result: 'requeue_after' });
      } else {
        metrics?.reconcileTotal.inc({ controller: name, result: 'success' });
      }
    } catch (error) {
      metrics?.reconcileTotal.inc({ controller: name, result: 'error' });
      metrics?.reconcileErrors.inc({ controller: name });
      if (abort.signal.aborted) return;
      logger?.error(
        { key, err: error, retries: queue.numRequeues(key) },
        `reconcile failed: ${errorMessage(error)}`,
      );
      queue.addRateLimited(key);
    } finally {
      metrics?.activeWorkers.dec({ controller: name });
      metrics?.reconcileTime.observe({ controller: name }, (performance.now() - started) / 1000);
    }
  }

  async function worker(): Promise<void> {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        await reconcileOne(key);
      } finally {
        queue.done(key);
      }
    }
  }

  return {
    name,
    queue,
    enqueue: (key) => queue.add(key),
    get running() {
      return running;
    },
    start() {
      if (running || abort.signal.aborted) return;
      running = true;
      metrics?.maxConcurrentReconciles.set({ controller: name }, concurrency);
      workers = Array.from({ length: concurrency }, () => worker());
      logger?.info({ concurrency }, 'controller started');
    },
    async stop() {
      abort.abort();
      await queue.shutdown({ drain: true });
      await Promise.all(workers);
      running = false;
      logger?.info('controller stopped');
    },
  };
}
