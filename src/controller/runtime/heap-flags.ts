import { setFlagsFromString } from 'node:v8';
import { startIdleCollector, type IdleCollector } from './idle-collect.js';

/**
 * V8 flags the controller turns on once it runs, after V8 has sized its heap from the
 * command line (the image's ENTRYPOINT, Dockerfile).
 *
 * `--optimize-for-size` keeps the old generation compact and lets V8's memory reducer give a
 * burst's garbage back at rest (10 000 cached runs: 204 → 168 MiB when it came in). On the
 * command line it also implies `--max-semi-space-size=1` (V8's flag-definitions.h: a value
 * implication that overrides the size given beside it), and a 1 MiB young generation cost a
 * burst of 500 runs about 210 scavenges where 8 MiB costs about 25: most of the controller's
 * CPU above the Job controller's (docs/benchmarks.md, "Reconcile cost, third pass"). Turned on
 * here, after the heap was configured, it keeps the semi-spaces the command line gave and
 * changes only what V8 decides from then on (old-generation growth, compaction, the reducer).
 */
export const CONTROLLER_RUNTIME_V8_FLAGS = ['--optimize-for-size'] as const;

/** Turns on CONTROLLER_RUNTIME_V8_FLAGS (or `flags`) in this process. */
export function applyControllerHeapFlags(
  flags: readonly string[] = CONTROLLER_RUNTIME_V8_FLAGS,
): void {
  for (const flag of flags) setFlagsFromString(flag);
}

/**
 * The controller's heap as `lorenz controller` runs it: the flags above, and a full
 * collection when it goes idle after a burst (idle-collect.ts). Stop the collector on exit.
 */
export function tuneControllerHeap(
  flags: readonly string[] = CONTROLLER_RUNTIME_V8_FLAGS,
): IdleCollector {
  applyControllerHeapFlags(flags);
  return startIdleCollector();
}
