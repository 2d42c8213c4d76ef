import type { Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { STORAGECLASSES, resourcePath, statusOf } from '../runtime/client.js';

/**
 * The StorageClass a Workflow's workspace claim template names, looked up by name before
 * the first claim is made: a claim of a class that does not exist stays Pending, its Pod
 * unschedulable, with nothing on the IssueRun to say why. Only a class named outright is
 * checked (none, or "", is the cluster's default or a static volume: nothing to look up).
 * A controller bound to namespaces only may not read cluster-scoped objects: a 403 proves
 * nothing, so the run goes on as before. Returns what is wrong, or null.
 */
export async function missingStorageClass(
  client: KubeClient,
  workflow: Workflow,
): Promise<string | null> {
  const name = workflow.spec.workspace?.volumeClaimTemplate?.spec.storageClassName;
  if (typeof name !== 'string' || name === '') return null;
  try {
    await client.request({ path: resourcePath(STORAGECLASSES, undefined, name) });
    return null;
  } catch (error) {
    const status = statusOf(error);
    if (status === 403) return null;
    if (status !== 404) throw error;
    return `waiting for StorageClass ${name} (spec.workspace.volumeClaimTemplate.spec.storageClassName of Workflow ${workflow.metadata.name}): not found; a workspace claim of it would stay Pending`;
  }
}
