// The bounded cache behind the controller's memories: least recently used goes first.
import { describe, expect, it } from 'vitest';
import { createBoundedCache, memoized } from '../../../src/workflow/bounded-cache.js';

describe('createBoundedCache', () => {
  it('drops the least recently used entry once full', () => {
    const cache = createBoundedCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // a is now the most recently used
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
    expect(cache.size).toBe(2);
  });

  it('replaces a key without growing, and forgets on delete and deleteWhere', () => {
    const cache = createBoundedCache<string, number>(3);
    cache.set('a', 1);
    cache.set('a', 10);
    cache.set('b', 2);
    cache.set('c', 3);
    expect(cache.size).toBe(3);
    expect(cache.get('a')).toBe(10);
    cache.delete('b');
    cache.deleteWhere((value) => value > 5);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, undefined, 3]);
  });

  it('keeps nothing with no capacity', () => {
    const cache = createBoundedCache<string, number>(0);
    cache.set('a', 1);
    expect(cache.get('a')).toBeUndefined();
  });
});

describe('memoized', () => {
  it('computes a key once while it is kept, and again after it went', () => {
    const cache = createBoundedCache<string, string>(1);
    const calls: string[] = [];
    const upper = (key: string) => (calls.push(key), key.toUpperCase());
    expect(memoized(cache, 'a', upper)).toBe('A');
    expect(memoized(cache, 'a', upper)).toBe('A');
    expect(memoized(cache, 'b', upper)).toBe('B');
    expect(memoized(cache, 'a', upper)).toBe('A');
    expect(calls).toEqual(['a', 'b', 'a']);
  });

  it('remembers nothing when the computation throws', () => {
    const cache = createBoundedCache<string, string>(4);
    let fail = true;
    const compute = () => {
      if (fail) throw new Error('broken');
      return 'ok';
    };
    expect(() => memoized(cache, 'k', compute)).toThrow('broken');
    fail = false;
    expect(memoized(cache, 'k', compute)).toBe('ok');
  });
});
