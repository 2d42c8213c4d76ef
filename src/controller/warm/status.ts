import { WARM_STATUS_KEYS, type WarmStatus, type Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { ACCEPT_METADATA_ONLY, resourcePath } from '../runtime/client.js';
import { WORKFLOWS } from '../shared/resources.js';
import { jsonEqual } from '../shared/status-writer.js';

/**
 * status.warm, and nothing else of the Workflow's status: a JSON merge patch of that one
 * field (the Workflow reconciler never names it: its patches set its own fields one by one).
 * Keys the new value lacks are sent as null, which a merge patch reads as "remove".
 */
export function warmStatusPatch(next: WarmStatus | undefined): { status: { warm: unknown } } {
  if (next === undefined) return { status: { warm: null } };
  const value: Record<string, unknown> = {};
  for (const key of WARM_STATUS_KEYS) value[key] = next[key] ?? null;
  return { status: { warm: value } };
}

const olderThan = (a: string | undefined, b: string): boolean =>
  a === undefined || (/^\d+$/.test(a) && /^\d+$/.test(b) ? BigInt(a) < BigInt(b) : false);

/**
 * The warm status writer, with the memory of its last write: the informer's copy lags a
 * write by a watch event, and a reconcile in between must not take the old status.warm for
 * the truth (it would start the same build twice, or take its own deleted Pod for a lost one).
 */
export function createWarmStatusWriter(client: KubeClient) {
  const written = new Map<string, { resourceVersion: string; warm: WarmStatus | undefined }>();
  return {
    freshest(key: string, workflow: Workflow): WarmStatus | undefined {
      const last = written.get(key);
      if (!last) return workflow.status?.warm;
      if (olderThan(workflow.metadata.resourceVersion, last.resourceVersion)) return last.warm;
      written.delete(key);
      return workflow.status?.warm;
    },
    /** Writes `next` when it differs from `before`; resolves once it is in. */
    async write(
      key: string,
      workflow: Workflow,
      before: WarmStatus | undefined,
      next: WarmStatus | undefined,
    ): Promise<void> {
      if (jsonEqual(before ?? null, next ?? null)) return;
      const object = await client.request<{ metadata?: { resourceVersion?: string } }>({
        method: 'PATCH',
        path: resourcePath(
          WORKFLOWS,
          workflow.metadata.namespace,
          workflow.metadata.name,
          'status',
        ),
        patchType: 'merge',
        body: warmStatusPatch(next),
        headers: { Accept: ACCEPT_METADATA_ONLY },
      });
      written.set(key, { resourceVersion: object.metadata?.resourceVersion ?? '', warm: next });
    },
    forget(key: string): void {
      written.delete(key);
    },
  };
}
