import type { V1Container } from '@kubernetes/client-node';
import { AGENT_CONTAINER_NAME, sha256Hex, type Workflow } from '../../api/index.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import { canonicalJson } from '../shared/status-writer.js';

/**
 * The digest of what shapes a warm snapshot's tree: workspace.git (what is cloned and set up),
 * after_create and the hook timeout (what runs on it), the agent container's image and env
 * (what they run with) and the claim template (where it lands). A change to any of them makes
 * the snapshot stale: a full warm-up rebuilds it. Anything else (the prompt, the tracker, the
 * other hooks, the agent's turns) is the run's business and leaves the snapshot in force.
 */
export function warmConfigDigest(workflow: Workflow, config: WorkflowConfig): string {
  const agent = (workflow.spec.podTemplate?.spec?.containers ?? []).find(
    (container) => container.name === AGENT_CONTAINER_NAME,
  ) as V1Container | undefined;
  const shaping = {
    git: config.workspace.git,
    afterCreate: config.hooks.afterCreate,
    hooksTimeoutMs: config.hooks.timeoutMs,
    image: agent?.image ?? null,
    env: agent?.env ?? [],
    envFrom: agent?.envFrom ?? [],
    claim: workflow.spec.workspace?.volumeClaimTemplate ?? null,
  };
  return `sha256:${sha256Hex(canonicalJson(shaping))}`;
}
