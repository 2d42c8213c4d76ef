// The load side of the reconcile benchmark: create many objects with bounded concurrency,
// see each one's Pod appear through a watch, turn the two clocks into latencies.
import { performance } from 'node:perf_hooks';
import type { KubeClient } from '../src/controller/runtime/client.js';

/** Runs `work` over `items` with at most `limit` calls in flight. */
export async function inPool<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/** Nearest-rank percentile of an ascending list (p in 0..100). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

interface PodEvent {
  type: string;
  object: {
    metadata?: {
      resourceVersion?: string;
      ownerReferences?: { name: string; controller?: boolean }[];
    };
  };
}

export interface PodWatch {
  /** Resolves with the owners still without a Pod when all are seen or `timeoutMs` passed. */
  waitForAll(owners: readonly string[], timeoutMs: number): Promise<string[]>;
  /** performance.now() at which the first Pod controlled by `owner` was seen. */
  seenAt(owner: string): number | undefined;
  stop(): void;
}

/**
 * Watches one namespace's Pods and notes when the first Pod of each controlling owner
 * (IssueRun or Job) shows up. Starts from a fresh list, so nothing created afterwards is
 * missed; a watch the server closes is resumed from the last resourceVersion.
 */
export async function watchPodOwners(client: KubeClient, namespace: string): Promise<PodWatch> {
  const path = `/api/v1/namespaces/${namespace}/pods`;
  const seen = new Map<string, number>();
  const waiters = new Set<() => void>();
  const note = (event: PodEvent) => {
    const owner = event.object.metadata?.ownerReferences?.find((ref) => ref.controller)?.name;
    if (!owner || seen.has(owner)) return;
    seen.set(owner, performance.now());
    for (const wake of waiters) wake();
  };
  const list = await client.request<{
    metadata: { resourceVersion: string };
    items: PodEvent['object'][];
  }>({ path });
  for (const object of list.items) note({ type: 'ADDED', object });
  let resourceVersion = list.metadata.resourceVersion;
  const abort = new AbortController();

  const follow = async () => {
    while (!abort.signal.aborted) {
      try {
        await client.stream({
          path,
          query: { watch: 1, resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 300 },
          signal: abort.signal,
          onLine: (line) => {
            const event = JSON.parse(line) as PodEvent;
            resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
            if (event.type === 'ADDED' || event.type === 'MODIFIED') note(event);
          },
        });
      } catch (error) {
        if (abort.signal.aborted) return;
        process.stderr.write(
          `[bench] pod watch on ${namespace} broke, resuming: ${String(error)}\n`,
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  void follow();

  return {
    seenAt: (owner) => seen.get(owner),
    waitForAll(owners, timeoutMs) {
      const missing = () => owners.filter((owner) => !seen.has(owner));
      return new Promise((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(missing());
        };
        const check = () => {
          if (missing().length === 0) finish();
        };
        const timer = setTimeout(finish, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    stop: () => abort.abort(),
  };
}

export interface LoadFigures {
  count: number;
  /** Per object: create call returned → its first Pod seen, ascending, in ms. */
  latencies: number[];
  /** First create call sent → last Pod seen, in ms. */
  totalMs: number;
  /** Objects whose Pod never showed up within the timeout. */
  missing: number;
}

/**
 * Creates `names.length` objects (`make(name)` is the body, `path` the collection) at
 * `concurrency` in flight and waits until each one's Pod exists.
 */
export async function createAndWaitForPods(options: {
  client: KubeClient;
  watch: PodWatch;
  path: string;
  names: readonly string[];
  make: (name: string) => object;
  concurrency: number;
  timeoutMs: number;
}): Promise<LoadFigures> {
  const { client, watch, names } = options;
  const created = new Map<string, number>();
  const start = performance.now();
  await inPool(names, options.concurrency, async (name) => {
    await client.request({ method: 'POST', path: options.path, body: options.make(name) });
    created.set(name, performance.now());
  });
  const missing = await watch.waitForAll(names, options.timeoutMs);
  const latencies: number[] = [];
  let last = start;
  for (const name of names) {
    const seen = watch.seenAt(name);
    const sent = created.get(name);
    if (seen === undefined || sent === undefined) continue;
    // Under load the watch event can be handled before the create's response: that is 0.
    latencies.push(Math.max(0, seen - sent));
    last = Math.max(last, seen);
  }
  latencies.sort((a, b) => a - b);
  return { count: names.length, latencies, totalMs: last - start, missing: missing.length };
}

export const sequenceNames = (prefix: string, count: number): string[] =>
  Array.from({ length: count }, (_, index) => `${prefix}-${String(index).padStart(5, '0')}`);
