import { Reasons, type Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { SECRETS, isNotFound, resourcePath } from '../runtime/client.js';

export type SshKeyCheck =
  | { ok: true; secretName: string }
  /** Nothing to mount: the run waits (Stalled) with this reason, and looks again later. */
  | { ok: false; reason: string; message: string };

/**
 * The SSH key Secret of a Workflow with worker.ssh_hosts, checked before any Pod is made,
 * as the git credentials are (git-credentials.ts): a Pod mounting a Secret that does not
 * exist waits on the kubelet with nothing on the IssueRun to say why. Only existence is
 * checked; the controller never reads the key.
 *
 * A Workflow that names no Secret stalls rather than fails: the fix is on the Workflow (add
 * spec.worker.sshKeySecretRef), not on the run, and the run goes on as soon as it is made.
 */
export async function checkSshKey(client: KubeClient, workflow: Workflow): Promise<SshKeyCheck> {
  const name = workflow.metadata.name ?? '';
  const ref = workflow.spec.worker?.sshKeySecretRef;
  if (!ref) {
    return {
      ok: false,
      reason: Reasons.SshKeySecretRefMissing,
      message: `WORKFLOW.md sets worker.ssh_hosts but Workflow ${name} has no spec.worker.sshKeySecretRef: name a Secret with the keys ssh-privatekey and known_hosts`,
    };
  }
  try {
    await client.request({ path: resourcePath(SECRETS, workflow.metadata.namespace, ref.name) });
    return { ok: true, secretName: ref.name };
  } catch (error) {
    if (!isNotFound(error)) throw error;
    return {
      ok: false,
      reason: Reasons.SshKeyNotFound,
      message: `waiting for Secret ${ref.name} (spec.worker.sshKeySecretRef of Workflow ${name}): not found`,
    };
  }
}
