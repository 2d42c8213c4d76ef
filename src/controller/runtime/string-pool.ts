/**
 * One copy of each short string value across the objects a cache holds. JSON.parse makes a
 * new string for every value of every object, and the objects of one kind repeat the same
 * values: a run's conditions say the same reason and message four times, every run of a
 * Workflow the same ones, every run Pod the same image, env names and mount paths. Measured
 * on a parked IssueRun as the informer keeps it: 1990 bytes, 1400 with its status's strings
 * shared.
 */

/** Longer values (a whole message, a log tail) are seldom repeated: not worth a lookup. */
export const MAX_SHARED_LENGTH = 128;
/**
 * Distinct strings a pool remembers: past this it starts afresh (the objects keep the copies
 * they hold; only later ones stop sharing them), so unique values (uids, names) cannot grow it
 * without bound.
 */
export const POOL_SIZE = 20_000;

export type StringPool = (value: string) => string;

export function createStringPool(limit = POOL_SIZE): StringPool {
  let pool = new Map<string, string>();
  return (value) => {
    if (value.length > MAX_SHARED_LENGTH) return value;
    const known = pool.get(value);
    if (known !== undefined) return known;
    if (pool.size >= limit) pool = new Map();
    pool.set(value, value);
    return value;
  };
}

/** Replaces, in place, every string value under `node` by the pool's copy. Keys are left. */
export function shareStrings(node: unknown, pool: StringPool): void {
  if (Array.isArray(node)) {
    for (let index = 0; index < node.length; index++) {
      const item: unknown = node[index];
      if (typeof item === 'string') node[index] = pool(item);
      else if (typeof item === 'object' && item !== null) shareStrings(item, pool);
    }
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  // for-in, not Object.keys(): no key array per object of every watch event.
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const value = record[key];
    if (typeof value === 'string') record[key] = pool(value);
    else if (typeof value === 'object' && value !== null) shareStrings(value, pool);
  }
}
