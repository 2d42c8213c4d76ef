// What the inbox and review controllers keep of a run between its looks: how many looks in a
// row have failed (the exponent of the backoff) and whether a webhook asked to look now. Both
// keep them alike, and forget them alike when the run is gone.

export interface RunWatcherMarks {
  /** Counts a failed look; answers how many failed in a row before it (0 for the first). */
  failed: (key: string) => number;
  /** A look went through: the next failure backs off from the start again. */
  succeeded: (key: string) => void;
  /** A webhook said "look now". */
  wake: (key: string) => void;
  /** Whether a wake is pending for the run. */
  woken: (key: string) => boolean;
  /** The look that a wake asked for has happened. */
  wakeTaken: (key: string) => void;
  /** The run is gone (or being deleted): nothing of it is kept. */
  forget: (key: string) => void;
}

export function createRunWatcherMarks(): RunWatcherMarks {
  const failures = new Map<string, number>();
  const woken = new Set<string>();
  return {
    failed: (key) => {
      const count = failures.get(key) ?? 0;
      failures.set(key, count + 1);
      return count;
    },
    succeeded: (key) => void failures.delete(key),
    wake: (key) => void woken.add(key),
    woken: (key) => woken.has(key),
    wakeTaken: (key) => void woken.delete(key),
    forget: (key) => {
      failures.delete(key);
      woken.delete(key);
    },
  };
}
