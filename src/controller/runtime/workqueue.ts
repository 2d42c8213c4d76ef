import { MAX_TIMER_MS } from '../../workflow/config-fields.js';
import { exponentialDelay } from './backoff.js';
import type { RuntimeMetrics } from './metrics.js';

/**
 * A keyed work queue with client-go's guarantees: a key is queued at most once however
 * often it is added; a key is handed to at most one worker at a time (added while being
 * processed, it is queued again when `done`); failures back off per key exponentially;
 * `addAfter` delays an add; `shutdown` stops handing out keys and (with drain) waits for
 * the keys being processed.
 */
export interface WorkQueue {
  readonly name: string;
  add(key: string): void;
  /** Adds after delayMs; an earlier pending delay for the same key wins. */
  addAfter(key: string, delayMs: number): void;
  /** Adds after this key's backoff (5 ms, 10 ms, … capped at 1000 s) and counts a retry. */
  addRateLimited(key: string): void;
  /** Resets the key's backoff (call on success). */
  forget(key: string): void;
  numRequeues(key: string): number;
  /** The next key; waits for one; undefined once the queue shut down. */
  get(): Promise<string | undefined>;
  /** Marks a key from `get` as processed. */
  done(key: string): void;
  /** Keys waiting (not counting those being processed or delayed). */
  len(): number;
  /** Stops the queue; with drain, resolves once every key being processed is done. */
  shutdown(options?: { drain?: boolean }): Promise<void>;
  readonly shuttingDown: boolean;
}

export interface WorkQueueOptions {
  name: string;
  baseDelayMs?: number;
  maxDelayMs?: number;
  metrics?: RuntimeMetrics;
  /** For tests: the clock used by the latency metrics. */
  now?: () => number;
}

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createWorkQueue(options: WorkQueueOptions): WorkQueue {
  const { name, metrics } = options;
  const baseDelayMs = options.baseDelayMs ?? 5;
  const maxDelayMs = options.maxDelayMs ?? 1_000_000;
  const now = options.now ?? (() => performance.now());
  const labels = { name, controller: name };

  const queue: string[] = [];
  const dirty = new Set<string>();
  const processing = new Map<string, number>();
  const addedAt = new Map<string, number>();
  const failures = new Map<string, number>();
  const delayed = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  const waiters: Array<(key: string | undefined) => void> = [];
  const drainWaiters: Array<() => void> = [];
  let shuttingDown = false;

  const updateDepth = () => metrics?.workqueueDepth.set(labels, queue.length);
  // Every series exists from the start (as controller-runtime's do): an idle queue hands
  // items straight to waiting workers and would otherwise never show a depth, so a
  // dashboard or an alert on it would see "no data" instead of 0.
  if (metrics) {
    updateDepth();
    metrics.workqueueAdds.inc(labels, 0);
    metrics.workqueueRetries.inc(labels, 0);
    metrics.workqueueQueueDuration.zero(labels);
    metrics.workqueueWorkDuration.zero(labels);
  }
  const untrack = metrics?.trackQueue({ labels, inFlightSince: () => processing.values(), now });

  function hand(key: string): void {
    const waiter = waiters.shift();
    if (waiter) {
      dirty.delete(key);
      start(key);
      waiter(key);
    } else {
      queue.push(key);
      updateDepth();
    }
  }

  function start(key: string): void {
    const since = addedAt.get(key);
    addedAt.delete(key);
    if (since !== undefined)
      metrics?.workqueueQueueDuration.observe(labels, (now() - since) / 1000);
    processing.set(key, now());
  }

  function add(key: string): void {
    if (shuttingDown || dirty.has(key)) return;
    metrics?.workqueueAdds.inc(labels);
    dirty.add(key);
    addedAt.set(key, now());
    if (processing.has(key)) return;
    hand(key);
  }

  function addAfter(key: string, delayMs: number): void {
    if (shuttingDown) return;
    if (delayMs <= 0) return add(key);
    const at = Date.now() + delayMs;
    const pending = delayed.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    // A Node timer holds at most 2³¹−1 ms and fires at once past it: wake up at that bound
    // instead (the reconcile then asks again for what is left, e.g. a 30-day TTL).
    const timer = setTimeout(
      () => {
        delayed.delete(key);
        add(key);
      },
      Math.min(delayMs, MAX_TIMER_MS),
    );
    delayed.set(key, { timer, at });
  }

  return {
    name,
    add,
    addAfter,
    addRateLimited(key) {
      const count = failures.get(key) ?? 0;
      failures.set(key, count + 1);
      metrics?.workqueueRetries.inc(labels);
      addAfter(key, exponentialDelay(count, baseDelayMs, maxDelayMs));
    },
    forget: (key) => void failures.delete(key),
    numRequeues: (key) => failures.get(key) ?? 0,
    get() {
      const key = queue.shift();
      if (key !== undefined) {
        updateDepth();
        dirty.delete(key);
        start(key);
        return Promise.resolve(key);
      }
      if (shuttingDown) return Promise.resolve(undefined);
      return new Promise((resolve) => waiters.push(resolve));
    },
    done(key) {
      const started = processing.get(key);
      if (started === undefined) return;
      processing.delete(key);
      metrics?.workqueueWorkDuration.observe(labels, (now() - started) / 1000);
      if (dirty.has(key) && !shuttingDown) hand(key);
      if (processing.size === 0) for (const wake of drainWaiters.splice(0)) wake();
    },
    len: () => queue.length,
    get shuttingDown() {
      return shuttingDown;
    },
    async shutdown(shutdownOptions = {}) {
      shuttingDown = true;
      untrack?.();
      for (const { timer } of delayed.values()) clearTimeout(timer);
      delayed.clear();
      queue.length = 0;
      dirty.clear();
      updateDepth();
      for (const wake of waiters.splice(0)) wake(undefined);
      if (shutdownOptions.drain && processing.size > 0) {
        await new Promise<void>((resolve) => drainWaiters.push(resolve));
      }
    },
  };
}
