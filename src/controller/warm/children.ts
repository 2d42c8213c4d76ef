import type {
  V1ConfigMap,
  V1PersistentVolumeClaim,
  V1PersistentVolumeClaimSpec,
  V1Pod,
  V1PodTemplateSpec,
} from '@kubernetes/client-node';
import {
  INPUT_FILES,
  RUNNER_FLAGS,
  SNAPSHOT_API_GROUP,
  SNAPSHOT_API_VERSION,
  VOLUME_SNAPSHOT_KIND,
  inputDigest,
  inputManifest,
  inputManifestText,
  type Workflow,
} from '../../api/index.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import {
  ANNOTATION_INPUTS_DIGEST,
  ANNOTATION_ISSUE_STATE,
  ANNOTATION_WARM_CONFIG_DIGEST,
  LABEL_COMPONENT,
  LABEL_MANAGED_BY,
  LABEL_WARM_OF,
  MANAGED_BY,
} from '../shared/constants.js';
import { labelValue } from '../shared/object-names.js';
import { workflowOwnerReference, type ObjectIdentity } from '../shared/owner.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { agentPod, gitCredentialsArgs } from '../shared/agent-pod.js';

/** The component label of a warm-up's inputs ConfigMap. */
export const COMPONENT_WARM_UP_INPUTS = 'warm-up-inputs';

/** The labels of every warm-up object and warm snapshot of a Workflow. */
export const warmLabels = (workflow: string): Record<string, string> => ({
  [LABEL_WARM_OF]: labelValue(workflow),
  [LABEL_MANAGED_BY]: MANAGED_BY,
});

export const identityOf = (workflow: Workflow): ObjectIdentity => ({
  name: workflow.metadata.name ?? '',
  namespace: workflow.metadata.namespace ?? '',
  uid: workflow.metadata.uid ?? '',
});

/** A warm-up's inputs: WORKFLOW.md and its manifest only (no issue, no prompt, no hooks file). */
export function warmUpInputs(workflowText: string): {
  files: Record<string, string>;
  digest: string;
} {
  const files: Record<string, string> = { [INPUT_FILES.workflow]: workflowText };
  const manifestText = inputManifestText(inputManifest(files));
  files[INPUT_FILES.manifest] = manifestText;
  return { files, digest: inputDigest(manifestText) };
}

export function warmUpInputsConfigMap(
  workflow: ObjectIdentity,
  name: string,
  inputs: { files: Record<string, string>; digest: string },
): V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: workflow.namespace,
      labels: { ...warmLabels(workflow.name), [LABEL_COMPONENT]: COMPONENT_WARM_UP_INPUTS },
      annotations: { [ANNOTATION_INPUTS_DIGEST]: inputs.digest },
      ownerReferences: [workflowOwnerReference(workflow)],
    },
    immutable: true,
    data: inputs.files,
  };
}

/** The warm-up's claim, from the Workflow's volumeClaimTemplate: what is snapshotted. */
export function warmUpClaim(
  workflow: ObjectIdentity,
  name: string,
  spec: V1PersistentVolumeClaimSpec,
): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: workflow.namespace,
      labels: warmLabels(workflow.name),
      ownerReferences: [workflowOwnerReference(workflow)],
    },
    spec,
  };
}

/**
 * A Workflow's warm-up Pod (src/api/warm-up.ts): an agent Pod like a run's in all but its
 * identity and mode (shared/agent-pod.ts), so it runs the Workflow's image, env and restricted
 * security, and mounts the git credentials as runs do; the runner prepares `.lorenz-source/`
 * on the claim and reports in its termination message. Owned by the Workflow, labelled
 * warm-of and never with an IssueRun; no tools, no SSH, no Kueue, no budget.
 */
export function warmUpPod(options: {
  workflow: Workflow;
  config: WorkflowConfig;
  name: string;
  operatorImage: string;
  inputsDigest: string;
  configDigest: string;
  unlessCommit: string | undefined;
  policy?: PodTemplatePolicy | undefined;
}): V1Pod {
  const { workflow, config, name } = options;
  const identity = identityOf(workflow);
  const gitCredentialsSecret = config.workspace.git
    ? workflow.spec.git?.credentialsSecretRef?.name
    : undefined;
  return agentPod(
    {
      podTemplate: workflow.spec.podTemplate as V1PodTemplateSpec | undefined,
      operatorImage: options.operatorImage,
      inputsConfigMap: name,
      hooksTimeoutMs: config.hooks.timeoutMs,
      activeDeadlineSeconds: warmUpDeadlineSeconds(config),
      redactSecrets: workflow.spec.redactSecretOutput ?? true,
      policy: options.policy,
      gitCredentialsSecret,
    },
    {
      name,
      namespace: identity.namespace,
      labels: warmLabels(identity.name),
      annotations: {
        [ANNOTATION_WARM_CONFIG_DIGEST]: options.configDigest,
        [ANNOTATION_ISSUE_STATE]: '',
        [ANNOTATION_INPUTS_DIGEST]: options.inputsDigest,
      },
      owner: workflowOwnerReference(identity),
      // A head check prepares nothing: an emptyDir is all it needs, and no claim is provisioned.
      claimName: options.unlessCommit === undefined ? name : undefined,
      // No slot, no issue: the runner's warm-up takes none of a run's flags.
      slot: undefined,
      runnerArgs: [
        `--${RUNNER_FLAGS.prepare}`,
        ...(options.unlessCommit === undefined
          ? []
          : [`--${RUNNER_FLAGS.unlessCommit}`, options.unlessCommit]),
        ...gitCredentialsArgs(gitCredentialsSecret),
      ],
    },
  );
}

/**
 * The warm-up's backstop deadline: the clone and the repository's setup (each step within the
 * hook timeout, as a run's are), after_create, the digest, and room to spare.
 */
export function warmUpDeadlineSeconds(config: WorkflowConfig): number {
  return 4 * Math.ceil(config.hooks.timeoutMs / 1000) + 600;
}

export interface VolumeSnapshotObject {
  metadata?: { name?: string; labels?: Record<string, string>; creationTimestamp?: string };
  spec?: { source?: { persistentVolumeClaimName?: string } };
  status?: { readyToUse?: boolean; error?: { message?: string } };
}

/** The VolumeSnapshot of a warm-up's claim: owned by the Workflow, independent of the claim. */
export function warmSnapshot(
  workflow: ObjectIdentity,
  name: string,
  snapshotClass: string | undefined,
): object {
  return {
    apiVersion: `${SNAPSHOT_API_GROUP}/${SNAPSHOT_API_VERSION}`,
    kind: VOLUME_SNAPSHOT_KIND,
    metadata: {
      name,
      namespace: workflow.namespace,
      labels: warmLabels(workflow.name),
      ownerReferences: [workflowOwnerReference(workflow)],
    },
    spec: {
      ...(snapshotClass === undefined ? {} : { volumeSnapshotClassName: snapshotClass }),
      source: { persistentVolumeClaimName: name },
    },
  };
}
