import { describe, expect, it } from 'vitest';
import type { WakeTarget } from '../../../../src/controller/shared/wake.js';
import {
  createCoalescer,
  createReplayGuard,
  createTokenBuckets,
  deliveryId,
} from '../../../../src/controller/webhooks/limits.js';

describe('deliveryId', () => {
  const body = Buffer.from('{"a":1}');
  it.each([
    ['github', { 'x-github-delivery': 'abc' }, 'github:id:abc'],
    ['gitlab', { 'x-gitlab-event-uuid': 'u-1' }, 'gitlab:id:u-1'],
    ['linear', { 'linear-delivery': 'd-1' }, 'linear:id:d-1'],
  ] as const)('%s uses its delivery header', (host, headers, expected) => {
    expect(deliveryId(host, headers, body)).toBe(expected);
  });

  it('falls back to the body digest (Jira, or no header)', () => {
    const jira = deliveryId('jira', { 'x-github-delivery': 'abc' }, body);
    expect(jira).toMatch(/^jira:sha256:[0-9a-f]{64}$/);
    expect(deliveryId('jira', {}, Buffer.from('{"a":1}'))).toBe(jira);
    expect(deliveryId('jira', {}, Buffer.from('{"a":2}'))).not.toBe(jira);
    expect(deliveryId('github', {}, body)).toMatch(/^github:sha256:/);
  });
});

describe('createReplayGuard', () => {
  it('remembers an id for the window, then forgets it', () => {
    let now = 0;
    const guard = createReplayGuard({ ttlMs: 1000, now: () => now });
    expect(guard.seen('a')).toBe(false);
    now = 999;
    expect(guard.seen('a')).toBe(true);
    now = 1000;
    expect(guard.seen('a')).toBe(false);
    expect(guard.seen('a')).toBe(true);
  });

  it('holds at most max ids, the oldest dropped first', () => {
    const guard = createReplayGuard({ ttlMs: 60_000, max: 3, now: () => 0 });
    for (const id of ['a', 'b', 'c', 'd']) expect(guard.seen(id)).toBe(false);
    expect(guard.size()).toBe(3);
    expect(guard.seen('d')).toBe(true);
    expect(guard.seen('b')).toBe(true);
    expect(guard.seen('a')).toBe(false);
  });
});

describe('createTokenBuckets', () => {
  it('allows the burst, then the rate, per key', () => {
    let now = 0;
    const buckets = createTokenBuckets({ ratePerSecond: 20, burst: 40, now: () => now });
    const taken = Array.from({ length: 50 }, () => buckets.take('ns/a')).filter(Boolean);
    expect(taken).toHaveLength(40);
    expect(buckets.take('ns/b')).toBe(true);
    now = 100; // 2 tokens refilled
    expect([buckets.take('ns/a'), buckets.take('ns/a'), buckets.take('ns/a')]).toEqual([
      true,
      true,
      false,
    ]);
    now = 100_000;
    const refilled = Array.from({ length: 50 }, () => buckets.take('ns/a')).filter(Boolean);
    expect(refilled).toHaveLength(40);
  });
});

describe('createCoalescer', () => {
  function fakeTimers() {
    const pending: { callback: () => void; cleared: boolean }[] = [];
    return {
      timers: {
        setTimeout: (callback: () => void) => {
          const timer = { callback, cleared: false };
          pending.push(timer);
          return timer;
        },
        clearTimeout: (handle: unknown) => {
          (handle as { cleared: boolean }).cleared = true;
        },
      },
      fire() {
        for (const timer of pending.splice(0)) if (!timer.cleared) timer.callback();
      },
    };
  }
  const a: WakeTarget = { kind: 'poll', namespace: 'ns', workflow: 'a' };
  const b: WakeTarget = { kind: 'poll', namespace: 'ns', workflow: 'b' };
  const ra: WakeTarget = { kind: 'review', namespace: 'ns', workflow: 'a', branch: 'x' };

  it('emits the first at once and the rest of the window as one', () => {
    const clock = fakeTimers();
    const emitted: WakeTarget[] = [];
    const coalescer = createCoalescer({ emit: (t) => emitted.push(t), timers: clock.timers });
    for (let i = 0; i < 100; i += 1) coalescer.push(a);
    coalescer.push(b);
    coalescer.push(ra);
    expect(emitted).toEqual([a, b, ra]);
    clock.fire();
    expect(emitted).toEqual([a, b, ra, a]);
    clock.fire();
    expect(emitted).toEqual([a, b, ra, a]);
    coalescer.push(a);
    expect(emitted).toEqual([a, b, ra, a, a]);
  });

  it('drops the trailing wakes on close', () => {
    const clock = fakeTimers();
    const emitted: WakeTarget[] = [];
    const coalescer = createCoalescer({ emit: (t) => emitted.push(t), timers: clock.timers });
    coalescer.push(a);
    coalescer.push(a);
    coalescer.close();
    clock.fire();
    expect(emitted).toEqual([a]);
  });
});
