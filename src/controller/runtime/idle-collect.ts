import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection as soon as the controller goes idle after a burst of work.
 *
 * A burst (500 runs started, 10 000 parked runs' statuses written) leaves the heap with the
 * garbage of its last stretch and a full young generation; V8's memory reducer collects and
 * gives them back only 8 s after its last mark-compact, and 10 000 cached runs measured
 * 154–166 MiB just after a burst against 139–146 MiB at rest (docs/benchmarks.md, "Reconcile
 * cost, third pass"). This does the reducer's work once, at the first half second the event
 * loop is idle after the heap grew: the same collection, sooner.
 */

export interface IdleCollectorOptions {
  /** How often the event loop's utilization is sampled. */
  intervalMs?: number;
  /** A sample below this utilization is idle (0.05 of 500 ms: under 25 ms of work). */
  idleUtilization?: number;
  /** The heap must have grown this much since the last collection (bytes). */
  minGrowthBytes?: number;
  /** Collections at least this far apart: a controller that is never idle for long pays none. */
  minSpacingMs?: number;
  /** The collection (tests pass their own); by default V8's full GC. */
  collect?: () => void;
  /** The heap's used bytes (tests pass their own). */
  heapUsed?: () => number;
  /** The event loop's utilization since `previous` (tests pass their own). */
  utilization?: (previous?: EventLoopUtilization) => EventLoopUtilization;
  now?: () => number;
}

export interface IdleCollector {
  /** Collections made so far. */
  collections(): number;
  stop(): void;
}

const DEFAULTS = {
  intervalMs: 500,
  idleUtilization: 0.05,
  minGrowthBytes: 8 * 2 ** 20,
  minSpacingMs: 5000,
} as const;

type GcFunction = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * V8's collection of all it can give back, without exposing `gc` to every module of the
 * process (as `--expose-gc` on the command line would): the flag is on only while one
 * context is made. The "last-resort" flavor is the one that compacts, shrinks the young
 * generation and returns the freed pages to the system, as the memory reducer's does; a
 * plain gc() frees the objects but keeps the pages (RSS unchanged).
 */
export function fullCollection(): () => void {
  const global = globalThis as { gc?: unknown };
  let gc: GcFunction;
  if (typeof global.gc === 'function') gc = global.gc as GcFunction;
  else {
    setFlagsFromString('--expose-gc');
    try {
      gc = runInNewContext('gc') as GcFunction;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

export function startIdleCollector(options: IdleCollectorOptions = {}): IdleCollector {
  const settings = { ...DEFAULTS, ...options };
  const collect = options.collect ?? fullCollection();
  const heapUsed = options.heapUsed ?? (() => getHeapStatistics().used_heap_size);
  const utilization =
    options.utilization ??
    ((previous?: EventLoopUtilization) => performance.eventLoopUtilization(previous));
  const now = options.now ?? (() => performance.now());
  let last = utilization();
  let baseline = heapUsed();
  let lastCollection = Number.NEGATIVE_INFINITY;
  let count = 0;
  const timer = setInterval(() => {
    const sample = utilization(last);
    last = utilization();
    if (sample.utilization >= settings.idleUtilization) return;
    const used = heapUsed();
    // Shrinking on its own (V8 collected meanwhile): that is the new floor.
    if (used < baseline) baseline = used;
    if (used - baseline < settings.minGrowthBytes) return;
    if (now() - lastCollection < settings.minSpacingMs) return;
    collect();
    count += 1;
    lastCollection = now();
    baseline = heapUsed();
  }, settings.intervalMs);
  // Never what keeps the process alive.
  timer.unref();
  return {
    collections: () => count,
    stop: () => clearInterval(timer),
  };
}
