import type { KubeClient, ResourceRef } from './client.js';
import { KubeApiError, resourcePath, statusOf } from './client.js';

/**
 * One object the controller reads before it acts on a run (a LocalQueue, a VolumeSnapshot):
 * there, not there, or its API not served at all (a 404 too, but not a Status naming the
 * object: the CRD is not installed). A 403 is its own answer: a controller given fewer
 * verbs cannot tell, and the callers go on rather than hold a run on what they cannot see.
 */
export type Lookup<T> =
  | { kind: 'found'; object: T }
  | { kind: 'notFound' }
  | { kind: 'notServed' }
  | { kind: 'forbidden' };

export async function lookUpObject<T>(
  client: KubeClient,
  resource: ResourceRef,
  namespace: string | undefined,
  name: string,
): Promise<Lookup<T>> {
  try {
    const object = await client.request<T>({ path: resourcePath(resource, namespace, name) });
    return { kind: 'found', object };
  } catch (error) {
    const status = statusOf(error);
    if (status === 403) return { kind: 'forbidden' };
    if (status !== 404) throw error;
    return namesObject(error, name) ? { kind: 'notFound' } : { kind: 'notServed' };
  }
}

/** Whether a 404 names the object asked for (else it is the API that is not served). */
function namesObject(error: unknown, name: string): boolean {
  if (!(error instanceof KubeApiError)) return false;
  const body = error.body;
  if (typeof body !== 'object' || body === null || !('details' in body)) return false;
  const details = body.details;
  return typeof details === 'object' && details !== null && 'name' in details
    ? details.name === name
    : false;
}
