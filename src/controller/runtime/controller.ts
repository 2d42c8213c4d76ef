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
  /** Starts the workers, or resumes them after pause(). */
  start(): void;
  /**
   * Stops handing out keys (they stay queued), aborts the running reconciles' context and
   * waits for them: a leader that lost its lease stops writing at once and may lead again.
   */
  pause(): Promise<void>;
  /** For good: shuts the queue down, aborts the context, waits for running reconciles. */
  stop(): Promise<void>;
  readonly running: boolean;
}

/**
 * Workers pulling keys from a queue: success forgets the key's backoff, an error re-queues
 * it with backoff, `requeueAfter` re-queues it after the delay (and forgets the backoff, as
 * controller-runtime does). The queue guarantees one worker per key.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createController(options: ControllerOptions): Controller {
  const { name, queue, reconcile, metrics } = options;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const logger = options.logger?.child({ controller: name });
  /** The context of one run of the workers (one leadership term): aborted by pause/stop. */
  let term = new AbortController();
  let workers: Promise<void>[] = [];
  let running = false;
  let stopped = false;
  const inFlight = new Set<Promise<void>>();
  /** Workers wait here while paused. */
  let resume: () => void = () => {};
  let gate = new Promise<void>((resolve) => (resume = resolve));

  async function reconcileOne(key: string, signal: AbortSignal): Promise<void> {
    const started = performance.now();
    metrics?.activeWorkers.inc({ controller: name });
    try {
      const result = await reconcile(key, { signal });
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
      if (signal.aborted) {
        // Cut short by pause: whoever leads next reconciles the key again.
        if (!queue.shuttingDown) queue.add(key);
        return;
      }
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
      await gate;
      const key = await queue.get();
      if (key === undefined) return;
      if (!running) {
        // Paused while this worker waited for a key: put it back for the next term.
        queue.done(key);
        queue.add(key);
        continue;
      }
      const work = reconcileOne(key, term.signal);
      inFlight.add(work);
      try {
        await work;
      } finally {
        inFlight.delete(work);
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
      if (running || stopped) return;
      running = true;
      if (term.signal.aborted) term = new AbortController();
      metrics?.maxConcurrentReconciles.set({ controller: name }, concurrency);
      if (workers.length === 0) workers = Array.from({ length: concurrency }, () => worker());
      resume();
      logger?.info({ concurrency }, 'controller started');
    },
    async pause() {
      if (!running) return;
      running = false;
      gate = new Promise<void>((resolve) => (resume = resolve));
      term.abort();
      await Promise.all(inFlight);
      logger?.info({ queued: queue.len() }, 'controller paused');
    },
    async stop() {
      stopped = true;
      running = false;
      term.abort();
      await queue.shutdown({ drain: true });
      resume();
      await Promise.all(workers);
      logger?.info('controller stopped');
    },
  };
}
