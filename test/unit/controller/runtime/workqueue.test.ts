import { afterEach, describe, expect, it, vi } from 'vitest';
import { createController } from '../../../../src/controller/runtime/controller.js';
import { createRuntimeMetrics } from '../../../../src/controller/runtime/metrics.js';
import { createWorkQueue, type WorkQueue } from '../../../../src/controller/runtime/workqueue.js';
import { exponentialDelay } from '../../../../src/controller/runtime/backoff.js';

const queues: WorkQueue[] = [];
function queue(options: Partial<Parameters<typeof createWorkQueue>[0]> = {}): WorkQueue {
  const created = createWorkQueue({ name: 'test', ...options });
  queues.push(created);
  return created;
}
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(queues.splice(0).map((q) => q.shutdown()));
});

describe('work queue', () => {
  it('holds a delay longer than a Node timer can (a 30-day TTL) instead of firing at once', async () => {
    const q = queue();
    q.addAfter('ns/ttl', 30 * 24 * 3600 * 1000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(q.len()).toBe(0);
  });

  it('de-duplicates a key added many times', async () => {
    const q = queue();
    for (const key of ['a', 'b', 'a', 'a', 'b']) q.add(key);
    expect(q.len()).toBe(2);
    expect([await q.get(), await q.get()]).toEqual(['a', 'b']);
  });

  it('hands a key to one worker at a time and re-queues it when added during processing', async () => {
    const q = queue();
    q.add('a');
    const key = await q.get();
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await Promise.resolve();
    expect(second).toBeUndefined();
    q.done(key!);
    await Promise.resolve();
    expect(second).toBe('a');
  });

  it.each([
    [0, 5],
    [1, 10],
    [2, 20],
    [10, 5120],
    [30, 1_000_000],
    [1000, 1_000_000],
  ])('backs off exponentially: failure %i waits %i ms', (failures, delay) => {
    expect(exponentialDelay(failures, 5, 1_000_000)).toBe(delay);
  });

  it('delays rate-limited adds per key and resets on forget', async () => {
    vi.useFakeTimers();
    const metrics = createRuntimeMetrics({ defaultMetrics: false });
    const q = queue({ metrics });
    q.addRateLimited('a');
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(2);
    expect(q.len()).toBe(0);
    vi.advanceTimersByTime(5);
    expect(q.len()).toBe(1);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    const retries = await metrics.registry.getSingleMetricAsString('workqueue_retries_total');
    expect(retries).toContain('workqueue_retries_total{name="test",controller="test"} 2');
  });

  it('addAfter keeps the earliest pending delay', () => {
    vi.useFakeTimers();
    const q = queue();
    q.addAfter('a', 1000);
    q.addAfter('a', 100);
    q.addAfter('a', 5000);
    vi.advanceTimersByTime(100);
    expect(q.len()).toBe(1);
  });

  it('shutdown wakes waiting workers and, with drain, waits for keys in flight', async () => {
    const q = queue();
    const waiting = q.get();
    q.add('x');
    expect(await waiting).toBe('x');
    const idle = q.get();
    let drained = false;
    const shutdown = q.shutdown({ drain: true }).then(() => (drained = true));
    expect(await idle).toBeUndefined();
    await Promise.resolve();
    expect(drained).toBe(false);
    q.done('x');
    await shutdown;
    expect(drained).toBe(true);
    q.add('y');
    expect(q.len()).toBe(0);
  });
});

describe('controller', () => {
  it('bounds concurrency, never runs a key twice at once, retries errors, honours requeueAfter', async () => {
    const metrics = createRuntimeMetrics({ defaultMetrics: false });
    const q = queue({ metrics });
    let active = 0;
    let peak = 0;
    const activeKeys = new Set<string>();
    const calls: string[] = [];
    let overlaps = 0;
    let failOnce = true;
    let requeued = false;
    const controller = createController({
      name: 'test',
      queue: q,
      concurrency: 2,
      metrics,
      reconcile: async (key) => {
        if (activeKeys.has(key)) overlaps++;
        activeKeys.add(key);
        peak = Math.max(peak, ++active);
        calls.push(key);
        await new Promise((resolve) => setTimeout(resolve, 5));
        active--;
        activeKeys.delete(key);
        if (key === 'ns/fail' && failOnce) {
          failOnce = false;
          throw new Error('boom');
        }
        if (key === 'ns/later' && !requeued) {
          requeued = true;
          return { requeueAfter: 20 };
        }
      },
    });
    controller.start();
    for (const key of ['ns/a', 'ns/b', 'ns/c', 'ns/fail', 'ns/later']) controller.enqueue(key);
    controller.enqueue('ns/a');
    await vi.waitFor(() => expect(calls.filter((k) => k === 'ns/fail')).toHaveLength(2), {
      timeout: 2000,
    });
    await vi.waitFor(() => expect(calls.filter((k) => k === 'ns/later')).toHaveLength(2), {
      timeout: 2000,
    });
    await controller.stop();
    expect(peak).toBe(2);
    expect(overlaps).toBe(0);
    const total = await metrics.registry.getSingleMetricAsString(
      'controller_runtime_reconcile_total',
    );
    expect(total).toContain(
      'controller_runtime_reconcile_total{controller="test",result="error"} 1',
    );
    expect(total).toContain(
      'controller_runtime_reconcile_total{controller="test",result="requeue_after"} 1',
    );
    const errors = await metrics.registry.getSingleMetricAsString(
      'controller_runtime_reconcile_errors_total',
    );
    expect(errors).toContain('controller_runtime_reconcile_errors_total{controller="test"} 1');
  });

  it('re-reconciles a key added while it was being reconciled, once', async () => {
    const q = queue();
    const calls: string[] = [];
    let release: () => void = () => {};
    const controller = createController({
      name: 'serial',
      queue: q,
      concurrency: 4,
      reconcile: async (key) => {
        calls.push(key);
        if (calls.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
    });
    controller.start();
    controller.enqueue('ns/a');
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    controller.enqueue('ns/a');
    controller.enqueue('ns/a');
    release();
    await vi.waitFor(() => expect(calls).toHaveLength(2));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await controller.stop();
    expect(calls).toEqual(['ns/a', 'ns/a']);
  });
});

describe('work queue metrics', () => {
  const sample = async (metrics: ReturnType<typeof createRuntimeMetrics>, name: string) =>
    metrics.registry.getSingleMetricAsString(name);

  it('exports every series from the start, before any item arrives', async () => {
    const metrics = createRuntimeMetrics({ defaultMetrics: false });
    queue({ metrics });
    const labels = '{name="test",controller="test"}';
    // Each series at 0, a histogram's by its _count.
    const series = [
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_retries_total',
      'workqueue_unfinished_work_seconds',
      'workqueue_longest_running_processor_seconds',
    ];
    const histograms = ['workqueue_queue_duration_seconds', 'workqueue_work_duration_seconds'];
    for (const name of series) {
      expect(await sample(metrics, name)).toContain(`${name}${labels} 0`);
    }
    for (const name of histograms) {
      expect(await sample(metrics, name)).toContain(`${name}_count${labels} 0`);
    }
  });

  it('shows work in progress while it is in progress: unfinished (sum) and longest', async () => {
    let clock = 0;
    const metrics = createRuntimeMetrics({ defaultMetrics: false });
    const q = queue({ metrics, now: () => clock });
    q.add('a');
    q.add('b');
    const a = await q.get();
    clock = 2000;
    const b = await q.get();
    clock = 5000;
    const labels = '{name="test",controller="test"}';
    expect(await sample(metrics, 'workqueue_unfinished_work_seconds')).toContain(
      `workqueue_unfinished_work_seconds${labels} 8`,
    );
    expect(await sample(metrics, 'workqueue_longest_running_processor_seconds')).toContain(
      `workqueue_longest_running_processor_seconds${labels} 5`,
    );
    q.done(a!);
    q.done(b!);
    expect(await sample(metrics, 'workqueue_unfinished_work_seconds')).toContain(
      `workqueue_unfinished_work_seconds${labels} 0`,
    );
  });
});
