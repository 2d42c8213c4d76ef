// The idle collector: one full collection when the controller goes idle after its heap grew,
// none while it works, none for a heap that did not grow, and never two close together.
import type { EventLoopUtilization } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  fullCollection,
  startIdleCollector,
  type IdleCollector,
  type IdleCollectorOptions,
} from '../../../../src/controller/runtime/idle-collect.js';

const MiB = 2 ** 20;

/** A controller whose event-loop load and heap the test sets, sample by sample. */
function fakeProcess() {
  const state = { utilization: 1, heapUsed: 40 * MiB, now: 0, collected: 0 };
  const sample = (): EventLoopUtilization => ({
    idle: 0,
    active: 0,
    utilization: state.utilization,
  });
  return {
    state,
    options: {
      intervalMs: 500,
      collect: () => {
        state.collected += 1;
        state.heapUsed = 40 * MiB;
      },
      heapUsed: () => state.heapUsed,
      utilization: sample,
      now: () => state.now,
    },
  };
}

describe('startIdleCollector', () => {
  let collector: IdleCollector | undefined;
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    collector?.stop();
    vi.useRealTimers();
  });

  const tick = (fake: ReturnType<typeof fakeProcess>, ms: number) => {
    fake.state.now += ms;
    vi.advanceTimersByTime(ms);
  };

  /** A fake process with the collector started on it (its options, then `options`). */
  const startOnFake = (options: IdleCollectorOptions = {}) => {
    const fake = fakeProcess();
    collector = startIdleCollector({ ...fake.options, ...options });
    return fake;
  };

  it('collects once at the first idle sample after the heap grew, then waits for more growth', () => {
    const fake = startOnFake();
    // A burst: busy, the heap grows.
    fake.state.heapUsed = 70 * MiB;
    tick(fake, 2000);
    expect(fake.state.collected).toBe(0);
    // Idle: one collection.
    fake.state.utilization = 0.01;
    tick(fake, 500);
    expect(fake.state.collected).toBe(1);
    expect(collector?.collections()).toBe(1);
    // Still idle, nothing grew: nothing more, however long.
    tick(fake, 30_000);
    expect(fake.state.collected).toBe(1);
  });

  it('does not collect while the event loop works, nor for a heap that barely grew', () => {
    const fake = startOnFake();
    fake.state.heapUsed = 100 * MiB;
    tick(fake, 10_000);
    expect(fake.state.collected).toBe(0);
    fake.state.heapUsed = 41 * MiB;
    fake.state.utilization = 0;
    tick(fake, 10_000);
    expect(fake.state.collected).toBe(0);
  });

  it('keeps collections at least minSpacingMs apart', () => {
    const fake = startOnFake({ minSpacingMs: 5000 });
    fake.state.utilization = 0;
    fake.state.heapUsed = 60 * MiB;
    tick(fake, 500);
    expect(fake.state.collected).toBe(1);
    // Grown again at once: it waits out the spacing.
    fake.state.heapUsed = 60 * MiB;
    tick(fake, 3000);
    expect(fake.state.collected).toBe(1);
    tick(fake, 2000);
    expect(fake.state.collected).toBe(2);
  });
});

describe('fullCollection', () => {
  it('is V8 collection without exposing gc to the process', () => {
    const hadGc = 'gc' in globalThis;
    const collect = fullCollection();
    expect(typeof collect).toBe('function');
    collect();
    expect('gc' in globalThis).toBe(hadGc);
  });
});
