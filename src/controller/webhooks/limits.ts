import { createHash } from 'node:crypto';
import type { WakeTarget } from '../shared/wake.js';
import type { WebhookHost } from './verify.js';

/** The header each sender gives every delivery a unique id in (redeliveries keep it). */
const DELIVERY_ID_HEADER: Record<WebhookHost, string | undefined> = {
  github: 'x-github-delivery',
  gitlab: 'x-gitlab-event-uuid',
  linear: 'linear-delivery',
  jira: undefined,
};

const MAX_ID = 200;

/**
 * What makes a delivery the same delivery again: the sender's id, else (Jira, or a sender
 * that leaves it out) the digest of the body, so that a captured delivery sent twice is seen.
 */
export function deliveryId(
  host: WebhookHost,
  headers: Readonly<Record<string, string | undefined>>,
  body: Buffer,
): string {
  const header = DELIVERY_ID_HEADER[host];
  const id = header ? headers[header]?.trim() : undefined;
  if (id && id.length <= MAX_ID) return `${host}:id:${id}`;
  return `${host}:sha256:${createHash('sha256').update(body).digest('hex')}`;
}

export interface ReplayGuard {
  /** True when the id was seen within the window; else remembers it and returns false. */
  seen(id: string): boolean;
  size(): number;
}

/**
 * Delivery ids remembered for `ttlMs`, at most `max` of them (the oldest go first), so a
 * flood of distinct ids costs bounded memory. A forgotten id only costs a repeated wake.
 */
export function createReplayGuard(options: {
  ttlMs?: number;
  max?: number;
  now?: () => number;
}): ReplayGuard {
  const ttl = options.ttlMs ?? 10 * 60_000;
  const max = options.max ?? 10_000;
  const now = options.now ?? Date.now;
  /** id → when it expires; a Map iterates in insertion order, the oldest first. */
  const ids = new Map<string, number>();
  const prune = (at: number) => {
    for (const [id, expires] of ids) {
      if (expires > at && ids.size <= max) break;
      ids.delete(id);
    }
  };
  return {
    seen(id) {
      const at = now();
      const expires = ids.get(id);
      if (expires !== undefined && expires > at) return true;
      ids.delete(id);
      ids.set(id, at + ttl);
      prune(at);
      return false;
    },
    size: () => ids.size,
  };
}

export interface TokenBuckets {
  /** Takes a token from the key's bucket; false when it is empty (answer 429). */
  take(key: string): boolean;
}

/**
 * A token bucket per key (per Workflow): `ratePerSecond` refilled, `burst` at most. Full
 * buckets are dropped past `maxKeys`, so deliveries for made-up Workflows cost bounded memory.
 */
export function createTokenBuckets(options: {
  ratePerSecond?: number;
  burst?: number;
  maxKeys?: number;
  now?: () => number;
}): TokenBuckets {
  const rate = options.ratePerSecond ?? 20;
  const burst = options.burst ?? 40;
  const maxKeys = options.maxKeys ?? 10_000;
  const now = options.now ?? Date.now;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key) {
      const at = now();
      const bucket = buckets.get(key) ?? { tokens: burst, at };
      const tokens = Math.min(burst, bucket.tokens + ((at - bucket.at) / 1000) * rate);
      buckets.delete(key);
      if (buckets.size >= maxKeys) {
        const oldest = buckets.keys().next().value;
        if (oldest !== undefined) buckets.delete(oldest);
      }
      if (tokens < 1) {
        buckets.set(key, { tokens, at });
        return false;
      }
      buckets.set(key, { tokens: tokens - 1, at });
      return true;
    },
  };
}

export interface Coalescer {
  push(target: WakeTarget): void;
  /** Drops the pending trailing wakes (the receiver stops). */
  close(): void;
}

const targetKey = (target: WakeTarget): string =>
  JSON.stringify([
    target.kind,
    target.namespace,
    target.workflow,
    target.kind === 'review' ? (target.branch ?? '') : '',
  ]);

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL_TIMERS: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Wakes for one target within `windowMs` collapse: the first goes out at once (latency is
 * the point), the rest of the window's become one more at its end, so a change made after
 * the first look is still looked at. A flood of 100 deliveries costs two looks, not 100.
 */
export function createCoalescer(options: {
  emit: (target: WakeTarget) => void;
  windowMs?: number;
  timers?: Timers;
}): Coalescer {
  const windowMs = options.windowMs ?? 100;
  const timers = options.timers ?? REAL_TIMERS;
  /** Targets in their window: whether another wake came in it, and the window's timer. */
  const open = new Map<string, { again: boolean; target: WakeTarget; timer: unknown }>();
  const startWindow = (key: string, target: WakeTarget) => {
    const timer = timers.setTimeout(() => {
      const window = open.get(key);
      open.delete(key);
      if (window?.again) {
        options.emit(window.target);
        startWindow(key, window.target);
      }
    }, windowMs);
    open.set(key, { again: false, target, timer });
  };
  return {
    push(target) {
      const key = targetKey(target);
      const window = open.get(key);
      if (window) {
        window.again = true;
        return;
      }
      options.emit(target);
      startWindow(key, target);
    },
    close() {
      for (const window of open.values()) timers.clearTimeout(window.timer);
      open.clear();
    },
  };
}
