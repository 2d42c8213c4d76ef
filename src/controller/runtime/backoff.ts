/**
 * The one exponential backoff of the controller: base·2^failures, capped at maxMs.
 * `failures` counts from 0 (the first retry waits baseMs); a count below 0, or not a
 * number, waits baseMs too. Every retry schedule (the work queue, the informer's re-list,
 * Event writes, refused creates, a slot's next attempt, log reads, archive writes) calls this.
 */
export function exponentialDelay(failures: number, baseMs: number, maxMs: number): number {
  // `!(failures > 0)` also catches NaN.
  if (!(failures > 0)) return Math.min(baseMs, maxMs);
  // Past 2^52 the product is beyond any cap; stop before it overflows to Infinity.
  if (failures > 52) return maxMs;
  return Math.min(baseMs * 2 ** Math.floor(failures), maxMs);
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
