import type { KubeClient, ResourceRef } from '../runtime/client.js';
import { ACCEPT_METADATA_ONLY, resourcePath } from '../runtime/client.js';

interface Written<S> {
  resourceVersion: string;
  /** The status written, until the cache has it (then dropped to save memory). */
  value: S | undefined;
  at: number;
}

/**
 * JSON with object keys sorted and undefined dropped: the apiserver returns custom
 * resources with their keys in its own order, so equal statuses must compare equal
 * whatever order they were built in.
 */
export function canonicalJson(value: unknown): string {
  const normalize = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(normalize);
    if (node === null || typeof node !== 'object') return node;
    const entries = Object.entries(node as Record<string, unknown>)
      .filter(([, child]) => child !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([key, child]) => [key, normalize(child)]));
  };
  return JSON.stringify(normalize(value));
}

const jsonLeaf = (value: unknown): unknown =>
  typeof value === 'number' && !Number.isFinite(value) ? null : value;

/**
 * Whether two values have the same canonicalJson, without building either string: the
 * status checks of every reconcile compare this way (building both strings, sorted copies
 * first, was a few percent of a burst's CPU). Index loops and for-in rather than every() and
 * Object.keys(): this runs on every status of a burst, and a closure and a key array per
 * object compared were 3 % of the burst's allocations (the young generation's scavenges).
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const left = jsonLeaf(a);
  const right = jsonLeaf(b);
  if (left === right) return true;
  if (typeof left !== 'object' || typeof right !== 'object' || left === null || right === null)
    return false;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    for (let index = 0; index < left.length; index++) {
      // In JSON an undefined element is null.
      if (!jsonEqual(left[index] ?? null, right[index] ?? null)) return false;
    }
    return true;
  }
  const leftObject = left as Record<string, unknown>;
  const rightObject = right as Record<string, unknown>;
  let defined = 0;
  for (const key in leftObject) {
    if (!Object.hasOwn(leftObject, key)) continue;
    const value = leftObject[key];
    if (value === undefined) continue;
    defined += 1;
    const other = rightObject[key];
    if (other === undefined || !Object.hasOwn(rightObject, key) || !jsonEqual(value, other))
      return false;
  }
  let rightDefined = 0;
  for (const key in rightObject) {
    if (Object.hasOwn(rightObject, key) && rightObject[key] !== undefined) rightDefined += 1;
  }
  return defined === rightDefined;
}

export interface Cached<S> {
  resourceVersion?: string | undefined;
  status: S | undefined;
}

const olderThan = (a: string | undefined, b: string): boolean => {
  // resourceVersions are opaque, but etcd's are integers: compare them when they are.
  if (a === undefined) return true;
  return /^\d+$/.test(a) && /^\d+$/.test(b) ? BigInt(a) < BigInt(b) : false;
};

/** A JSON pointer's segment (RFC 6901): `~` and `/` escaped. */
const pointerSegment = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The JSON patch of a status written field by field, leaving the `leave` fields to their own
 * writer: each field of `next` is set (replaced whole), each field `before` had and `next`
 * lacks is removed. With no status before, the whole status is added: the other writer waits
 * for the first one (the warm controller for the config the Workflow reconciler records).
 */
export function statusFieldsPatch(
  before: object | undefined,
  next: object,
  leave: readonly string[],
): { op: 'add' | 'remove'; path: string; value?: unknown }[] {
  const owned = (key: string) => !leave.includes(key);
  const kept = Object.entries(next as Record<string, unknown>).filter(
    ([key, value]) => owned(key) && value !== undefined,
  );
  if (before === undefined)
    return [{ op: 'add', path: '/status', value: Object.fromEntries(kept) }];
  const set = kept.map(([key, value]) => ({
    op: 'add' as const,
    path: `/status/${pointerSegment(key)}`,
    value,
  }));
  const dropped = Object.entries(before as Record<string, unknown>)
    .filter(([key, value]) => owned(key) && value !== undefined)
    .filter(([key]) => (next as Record<string, unknown>)[key] === undefined)
    .map(([key]) => ({ op: 'remove' as const, path: `/status/${pointerSegment(key)}` }));
  return [...set, ...dropped];
}

/**
 * Status writes through the status subresource, and the memory of the last one: an
 * informer's cache lags a write by a watch event, so a reconcile that runs in between
 * would see the old status and write the same change again. Comparing with the last write
 * (while the cache is older than it) makes that a no-op.
 *
 * `leave`: top-level status fields another controller writes (the Workflow's `warm`, the
 * warm controller's): this writer's patches set and remove its own fields one by one and
 * never name those, so neither writer's stale copy can overwrite the other's.
 */
export function createStatusWriter<S extends object>(
  client: KubeClient,
  resource: ResourceRef,
  options: { leave?: readonly string[] } = {},
) {
  const leave = options.leave ?? [];
  const written = new Map<string, Written<S>>();
  const freshest = (key: string, cached: Cached<S>): S | undefined => {
    const last = written.get(key);
    if (!last) return cached.status;
    if (olderThan(cached.resourceVersion, last.resourceVersion)) return last.value;
    // The cache has caught up with the write: it is the truth again; keep no copy.
    last.value = undefined;
    return cached.status;
  };
  return {
    freshest,
    /** Whether `next` differs from the freshest known status (cache or last write). */
    changed(key: string, cached: Cached<S>, next: S): boolean {
      return !jsonEqual(next, freshest(key, cached) ?? {});
    },
    /** When this controller last wrote the key's status (0 when never). */
    lastWriteAt(key: string): number {
      return written.get(key)?.at ?? 0;
    },
    /**
     * Writes `status`. `before`: the freshest status known (freshest()), needed with `leave`
     * to remove the fields `status` drops. `uid`: the object the status was built for; the
     * apiserver refuses the patch (its `test` fails) when the name now holds another one.
     */
    async write(
      key: string,
      namespace: string,
      name: string,
      status: S,
      now: number,
      options: { before?: S | undefined; uid?: string | undefined } = {},
    ): Promise<void> {
      const { before, uid } = options;
      const operations =
        leave.length === 0
          ? [{ op: 'add', path: '/status', value: status }]
          : statusFieldsPatch(before, status, leave);
      const object = await client.request<{ metadata?: { resourceVersion?: string } }>({
        method: 'PATCH',
        path: resourcePath(resource, namespace, name, 'status'),
        // A JSON patch replacing the whole status: a merge patch would drop every null
        // (exitCode: null of a killed hook means "deleted" in merge-patch semantics).
        patchType: 'json',
        body: uid ? [{ op: 'test', path: '/metadata/uid', value: uid }, ...operations] : operations,
        // Only the resourceVersion is read back: the whole object (its managed fields
        // included) was serialized by the apiserver and parsed here for nothing.
        headers: { Accept: ACCEPT_METADATA_ONLY },
      });
      written.set(key, {
        resourceVersion: object.metadata?.resourceVersion ?? '',
        value: status,
        at: now,
      });
    },
    forget(key: string): void {
      written.delete(key);
    },
  };
}
