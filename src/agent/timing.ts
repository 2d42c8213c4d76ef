/** A timer as a promise that can be dropped, so a lost race leaves no timer behind. */
export interface Timer {
  readonly elapsed: Promise<void>;
  cancel(): void;
}

export function startTimer(ms: number): Timer {
  let handle: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((done) => {
    handle = setTimeout(done, ms);
  });
  return { elapsed, cancel: () => clearTimeout(handle) };
}

/** Resolves when the signal aborts (never, if it never does). */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((done) => signal.addEventListener('abort', () => done(), { once: true }));
}

/** The value of `promise` if it settles within `ms`, else undefined. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  const timer = startTimer(ms);
  try {
    return await Promise.race([promise, timer.elapsed.then(() => undefined)]);
  } finally {
    timer.cancel();
  }
}
