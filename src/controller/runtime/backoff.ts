/** Exponential backoff: base·2^failures, capped. `failures` counts from 0. */
export function exponentialDelay(failures: number, baseMs: number, maxMs: number): number {
  // Past 2^52 the product is beyond any cap; stop before it overflows to Infinity.
  if (failures > 52) return maxMs;
  return Math.min(baseMs * 2 ** failures, maxMs);
}

/** Resolves after ms, or at once when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
