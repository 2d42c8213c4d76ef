// One bounded memory for the caches of pure answers (a WORKFLOW.md's load, a hook's parse,
// a time zone's validity, a verified token): a Map in insertion order, re-inserted on a hit,
// so the least recently used entry goes first once the cache is full. Bounded because the
// keys come from users' specs: a hostile or churning one must not grow the process.

export interface BoundedCache<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  delete(key: K): void;
  /** Drops every entry for which the test holds. */
  deleteWhere(test: (value: V, key: K) => boolean): void;
  readonly size: number;
}

export function createBoundedCache<K, V>(capacity: number): BoundedCache<K, V> {
  const entries = new Map<K, V>();
  return {
    get(key) {
      const value = entries.get(key);
      if (value === undefined) return undefined;
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    set(key, value) {
      if (capacity <= 0) return;
      entries.delete(key);
      entries.set(key, value);
      while (entries.size > capacity) {
        const oldest = entries.keys().next();
        if (oldest.done) break;
        entries.delete(oldest.value);
      }
    },
    delete: (key) => void entries.delete(key),
    deleteWhere(test) {
      for (const [key, value] of entries) if (test(value, key)) entries.delete(key);
    },
    get size() {
      return entries.size;
    },
  };
}

/** The answer for a key, computed once while it stays in the cache. */
export function memoized<K, V>(cache: BoundedCache<K, V>, key: K, compute: (key: K) => V): V {
  const known = cache.get(key);
  if (known !== undefined) return known;
  const value = compute(key);
  cache.set(key, value);
  return value;
}
