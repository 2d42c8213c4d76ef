import type { Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { SECRETS, isNotFound, resourcePath } from '../runtime/client.js';

/**
 * The git credentials Secret a run Pod will mount, looked up by name before the first Pod
 * is made: without it the kubelet would wait on the mount with nothing on the IssueRun to
 * say why. Only existence is checked (a GET; the controller never reads the tokens' use).
 * Returns what is wrong, or null when there is nothing to wait for.
 */
export async function missingGitCredentials(
  client: KubeClient,
  workflow: Workflow,
): Promise<string | null> {
  const ref = workflow.spec.git?.credentialsSecretRef;
  if (!ref) return null;
  try {
    await client.request({ path: resourcePath(SECRETS, workflow.metadata.namespace, ref.name) });
    return null;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    return `waiting for Secret ${ref.name} (spec.git.credentialsSecretRef of Workflow ${workflow.metadata.name}): not found`;
  }
}
