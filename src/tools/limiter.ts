/**
 * A token bucket per run: `burst` calls at once, refilled at `perMinute` a minute. The state
 * is a number and a timestamp per key, refilled on demand from the clock, so checking is
 * O(1) and nothing waits or runs on a timer: a flood is answered at once, never queued.
 */
export interface RateLimiterOptions {
  perMinute?: number;
  burst?: number;
  /** Milliseconds; injectable for tests. */
  now?: () => number;
  /** Buckets kept; beyond it, full (idle) buckets are dropped, then the oldest. */
  maxBuckets?: number;
}

export type RateVerdict = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface RateLimiter {
  /** Takes one call from the key's bucket, or says how long until one is there. */
  take(key: string): RateVerdict;
}

export const DEFAULT_CALLS_PER_MINUTE = 60;
export const DEFAULT_BURST = 20;

interface Bucket {
  tokens: number;
  at: number;
}

export function createRateLimiter(options: RateLimiterOptions = {}): RateLimiter {
  const perMinute = options.perMinute ?? DEFAULT_CALLS_PER_MINUTE;
  const burst = options.burst ?? DEFAULT_BURST;
  if (!(perMinute > 0) || !(burst >= 1)) {
    throw new RangeError('the rate limit needs calls per minute > 0 and a burst >= 1');
  }
  const now = options.now ?? Date.now;
  const maxBuckets = options.maxBuckets ?? 4096;
  const perMs = perMinute / 60_000;
  const buckets = new Map<string, Bucket>();

  const refill = (bucket: Bucket, at: number): void => {
    bucket.tokens = Math.min(burst, bucket.tokens + Math.max(0, at - bucket.at) * perMs);
    bucket.at = at;
  };

  // A full bucket is the same as no bucket, so dropping those loses nothing; only if every
  // run is mid-flood does the oldest go (it then starts full again, a bounded leniency).
  const prune = (at: number): void => {
    for (const [key, bucket] of buckets) {
      refill(bucket, at);
      if (bucket.tokens >= burst) buckets.delete(key);
    }
    while (buckets.size >= maxBuckets) {
      const oldest = buckets.keys().next();
      if (oldest.done) break;
      buckets.delete(oldest.value);
    }
  };

  return {
    take(key) {
      const at = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= maxBuckets) prune(at);
        bucket = { tokens: burst, at };
        buckets.set(key, bucket);
      }
      refill(bucket, at);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { ok: true };
      }
      return {
        ok: false,
        retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)),
      };
    },
  };
}
