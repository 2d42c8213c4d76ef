import type { KubeClient } from '../runtime/client.js';
import { SECRETS, isNotFound, resourcePath } from '../runtime/client.js';

export interface SecretSource {
  /** One key of a Secret, decoded; undefined when the Secret or the key is missing. */
  get(namespace: string, name: string, key: string): Promise<string | undefined>;
}

interface SecretObject {
  data?: Record<string, string>;
}

/**
 * Reads Secrets through the API (the controller watches none: a cache of every Secret in
 * the cluster would hold what it has no business holding), keeping each for `ttlMs`, so a
 * burst of deliveries costs one read and a rotated secret is in force within seconds. A
 * missing Secret is remembered as missing for as long.
 */
export function createSecretSource(
  client: KubeClient,
  options: { ttlMs?: number; max?: number; now?: () => number } = {},
): SecretSource {
  const ttl = options.ttlMs ?? 10_000;
  const max = options.max ?? 1000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { at: number; data: Promise<Record<string, string> | null> }>();

  async function read(namespace: string, name: string): Promise<Record<string, string> | null> {
    try {
      const secret = await client.request<SecretObject>({
        path: resourcePath(SECRETS, namespace, name),
      });
      return secret.data ?? {};
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  return {
    async get(namespace, name, key) {
      const cacheKey = `${namespace}/${name}`;
      const at = now();
      let entry = cache.get(cacheKey);
      if (!entry || at - entry.at >= ttl) {
        entry = { at, data: read(namespace, name) };
        cache.delete(cacheKey);
        if (cache.size >= max) {
          const oldest = cache.keys().next().value;
          if (oldest !== undefined) cache.delete(oldest);
        }
        cache.set(cacheKey, entry);
        // A failed read is not remembered: the next delivery asks again.
        const mine = entry;
        entry.data.catch(() => {
          if (cache.get(cacheKey) === mine) cache.delete(cacheKey);
        });
      }
      const data = await entry.data;
      const encoded = data?.[key];
      return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
    },
  };
}
