import type { V1PersistentVolumeClaimSpec, V1Pod } from '@kubernetes/client-node';
import { RUNNER_FLAGS } from '../../api/run-pod.js';
import {
  ANNOTATION_INPUTS_DIGEST,
  ANNOTATION_ISSUE_STATE,
  LABEL_ATTEMPT,
} from '../shared/constants.js';
import { runPodName, workspaceClaimName } from '../shared/object-names.js';
import { slotLabels } from './workspace-claim.js';
import { kueueMetadata, type RunPodQueue } from './kueue.js';
import { issueRunOwnerReference, type ObjectIdentity } from '../shared/owner.js';
import {
  agentPod,
  gitCredentialsArgs,
  sshArgs,
  toolsArgs,
  type AgentPodOptions,
} from '../shared/agent-pod.js';

export { DEFAULT_RUN_AS_USER } from '../shared/pod-security-context.js';
export { terminationGraceSeconds, type RunPodSsh, type RunPodTools } from '../shared/agent-pod.js';
export { workspaceClaim } from './workspace-claim.js';

export interface RunPodOptions extends AgentPodOptions {
  run: ObjectIdentity;
  workflowName: string;
  /** When set, the workspace is a PVC `<run>-<slot>-workspace` made from this spec. */
  volumeClaimSpec?: V1PersistentVolumeClaimSpec | undefined;
  slot: number;
  attempt: number;
  inputsDigest: string;
  /** Tracker state of the issue (projected by the downward API); '' when unknown. */
  issueState: string | null;
  /** The Kueue LocalQueue (and Pod group) the Pod waits in (kueue.ts); absent: not queued. */
  queue?: RunPodQueue | undefined;
}

/**
 * The run Pod for one slot and attempt (Tekton style: our init container installs the
 * entrypoint into a shared emptyDir, the user's image runs it). Deterministic: the same
 * inputs give the same Pod, and its name is fixed, so a stale cache can never make a second
 * Pod. Throws LorenzError `invalid_pod_template` naming every problem of the template.
 */
export function buildRunPod(options: RunPodOptions): V1Pod {
  const kueue = kueueMetadata(options.queue);
  return agentPod(options, {
    name: runPodName(options.run.name, options.slot, options.attempt),
    namespace: options.run.namespace,
    labels: {
      ...kueue.labels,
      ...slotLabels(options),
      [LABEL_ATTEMPT]: String(options.attempt),
    },
    annotations: {
      ...kueue.annotations,
      [ANNOTATION_ISSUE_STATE]: options.issueState ?? '',
      [ANNOTATION_INPUTS_DIGEST]: options.inputsDigest,
    },
    owner: issueRunOwnerReference(options.run),
    claimName: options.volumeClaimSpec
      ? workspaceClaimName(options.run.name, options.slot)
      : undefined,
    slot: options.slot,
    runnerArgs: [
      // A claim outlives the Pod: keep the tree for the next attempt.
      ...(options.volumeClaimSpec ? [`--${RUNNER_FLAGS.keepWorkspace}`] : []),
      // The claim was restored from a snapshot: the runner checks its tree before any hook.
      ...(options.sourceDigest === undefined
        ? []
        : [`--${RUNNER_FLAGS.sourceDigest}`, options.sourceDigest]),
      ...toolsArgs(options.tools),
      ...gitCredentialsArgs(options.gitCredentialsSecret),
      ...sshArgs(options.ssh),
    ],
  });
}
