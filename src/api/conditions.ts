import { z } from 'zod';

/**
 * The metav1.Condition shape, so that kubectl, kstatus (Flux, Argo CD) and `kubectl wait
 * --for=condition=…` read Lorenz status like any built-in resource's.
 */
export const conditionStatusSchema = z.enum(['True', 'False', 'Unknown']);
export type ConditionStatus = z.infer<typeof conditionStatusSchema>;

export const conditionSchema = z
  .object({
    type: z
      .string()
      .min(1)
      .max(316)
      .describe('Type of condition in CamelCase, e.g. Succeeded, Finished, Ready.'),
    status: conditionStatusSchema.describe('Status of the condition: True, False or Unknown.'),
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe(
        'The .metadata.generation that the condition was set from; a condition older than the current generation is stale.',
      ),
    lastTransitionTime: z
      .string()
      .meta({ format: 'date-time' })
      .describe('When the condition last changed from one status to another (RFC 3339).'),
    reason: z
      .string()
      .min(1)
      .max(1024)
      .describe('A CamelCase, machine-readable reason for the last transition.'),
    message: z
      .string()
      .max(32768)
      .describe('A human-readable message with details about the transition; may be empty.'),
  })
  .describe('A status condition (the metav1.Condition shape).');
export type Condition = z.infer<typeof conditionSchema>;

/** Conditions as a map list keyed by type, as the Kubernetes API conventions ask. */
export const conditionListSchema = z
  .array(conditionSchema)
  .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] })
  .describe('The latest observations of the object state, one per condition type.');

/** Condition types. */
export const SUCCEEDED = 'Succeeded';
export const FINISHED = 'Finished';
export const RECONCILING = 'Reconciling';
export const STALLED = 'Stalled';
export const READY = 'Ready';
export const CONFIG_VALID = 'ConfigValid';
/** The Workflow's tracker answered its last poll. */
export const TRACKER_REACHABLE = 'TrackerReachable';

export const ISSUERUN_CONDITION_TYPES = [SUCCEEDED, FINISHED, RECONCILING, STALLED] as const;
export const WORKFLOW_CONDITION_TYPES = [READY, CONFIG_VALID, RECONCILING, STALLED] as const;

/** Condition reasons (also the IssueRun's `status.reason`). */
export const Reasons = {
  Succeeded: 'Succeeded',
  Running: 'Running',
  Pending: 'Pending',
  HookFailed: 'HookFailed',
  HookTimedOut: 'HookTimedOut',
  /** A hook died of a signal, or was stopped because its run was cancelled or its Pod deleted. */
  HookKilled: 'HookKilled',
  /** The run Pod was deleted before it finished (not by a cancellation). */
  PodDeleted: 'PodDeleted',
  /**
   * The run Pod was deleted (a node-loss eviction, or by hand) and its node never stopped
   * it: still there 15 s after its grace period, the node is taken as lost.
   */
  NodeLost: 'NodeLost',
  AgentFailed: 'AgentFailed',
  /** A slot's attempt failed and its next attempt waits out the backoff (spec.retries). */
  RetryScheduled: 'RetryScheduled',
  /** A slot's attempt succeeded with its issue still active: the next one follows (1 s). */
  ContinuationScheduled: 'ContinuationScheduled',
  /**
   * A success: the run's issue reached a terminal state after the run's work (an attempt
   * succeeded, or the agent completed a turn), whether its turn loop ended on it or the
   * dispatcher stopped the run for it.
   */
  IssueCompleted: 'IssueCompleted',
  ImagePullFailed: 'ImagePullFailed',
  Unschedulable: 'Unschedulable',
  /** Kueue holds the attempt's Pods (spec.queueName): they wait for the LocalQueue's quota. */
  Queued: 'Queued',
  /** Kueue preempted the attempt (its quota was reclaimed): a failed attempt, retried by policy. */
  Preempted: 'Preempted',
  PodEvicted: 'PodEvicted',
  OOMKilled: 'OOMKilled',
  Cancelled: 'Cancelled',
  TemplateError: 'TemplateError',
  /** The workspace could not be made or used safely (containment, symlinks, skills). */
  WorkspaceError: 'WorkspaceError',
  /** workspace.git names no repository (workspace_repo_missing). */
  WorkspaceRepoMissing: 'WorkspaceRepoMissing',
  /** A short owner/name repo with no repo_template to expand it (workspace_repo_no_clone_address). */
  WorkspaceRepoNoCloneAddress: 'WorkspaceRepoNoCloneAddress',
  /** The issue's branch name could not be worked out (workspace_branch_unresolved). */
  WorkspaceBranchUnresolved: 'WorkspaceBranchUnresolved',
  /** git clone, or checking out the issue's branch, failed (workspace_clone_failed). */
  WorkspaceCloneFailed: 'WorkspaceCloneFailed',
  /** A step of the repository's setup failed; the clone was discarded (workspace_setup_failed). */
  WorkspaceSetupFailed: 'WorkspaceSetupFailed',
  /** The git credentials given to the run do not parse (invalid_git_credentials). */
  GitCredentialsInvalid: 'GitCredentialsInvalid',
  /** The Secret spec.git.credentialsSecretRef names does not exist (yet): no Pod is made. */
  GitCredentialsNotFound: 'GitCredentialsNotFound',
  /** The StorageClass the workspace claim template names does not exist (yet): no Pod is made. */
  StorageClassNotFound: 'StorageClassNotFound',
  /** The restored workspace's tree digest is not its snapshot's (snapshot_digest_mismatch). */
  SnapshotDigestMismatch: 'SnapshotDigestMismatch',
  /** The restored volume holds no prepared tree (snapshot_tree_missing). */
  SnapshotTreeMissing: 'SnapshotTreeMissing',
  /** The snapshot API (snapshot.storage.k8s.io/v1) is not served here: no claim, no Pod. */
  SnapshotsNotSupported: 'SnapshotsNotSupported',
  /** The VolumeSnapshot the source names does not exist in the run's namespace: no Pod. */
  SnapshotNotFound: 'SnapshotNotFound',
  /** The VolumeSnapshot exists but is not readyToUse (its error given): no Pod yet. */
  SnapshotNotReady: 'SnapshotNotReady',
  /** No VolumeSnapshotClass serves the claim's StorageClass's driver: it cannot be restored. */
  SnapshotClassNotFound: 'SnapshotClassNotFound',
  /** A snapshot source where it cannot be used (no claim template, SSH workers, isolation none). */
  WorkspaceSourceUnsupported: 'WorkspaceSourceUnsupported',
  /**
   * A run of a Workflow with spec.workspace.warm and fallback wait: no warm snapshot is ready
   * yet (the message says how the warm-up stands): no claim, no Pod.
   */
  WarmWorkspaceNotReady: 'WarmWorkspaceNotReady',
  /** status.warm: a warm-up Pod is preparing the workspace. */
  WarmUpRunning: 'WarmUpRunning',
  /** status.warm: the last warm-up made a snapshot, or found the default branch unchanged. */
  WarmUpSucceeded: 'WarmUpSucceeded',
  /** status.warm: the last warm-up failed; the last good snapshot stays in force. */
  WarmUpFailed: 'WarmUpFailed',
  /** status.warm: the Workflow cannot be warmed (the message says why): no warm-up is made. */
  WarmWorkspaceUnsupported: 'WarmWorkspaceUnsupported',
  /** spec.queueName is set but Kueue's API (kueue.x-k8s.io) is not served here: no Pod is made. */
  KueueNotInstalled: 'KueueNotInstalled',
  /** The LocalQueue spec.queueName names does not exist (yet) in the run's namespace: no Pod. */
  LocalQueueNotFound: 'LocalQueueNotFound',
  /** An SSH worker could not be reached or dropped the connection (ssh_connect). */
  SshConnectFailed: 'SshConnectFailed',
  /** worker.ssh_hosts is set but the Workflow names no spec.worker.sshKeySecretRef: no Pod. */
  SshKeySecretRefMissing: 'SshKeySecretRefMissing',
  /** The Secret spec.worker.sshKeySecretRef names does not exist (yet): no Pod is made. */
  SshKeyNotFound: 'SshKeyNotFound',
  /** Every SSH worker runs max_concurrent_agents_per_host agents: the slot waits for room. */
  SshHostsBusy: 'SshHostsBusy',
  /** A slot's attempt has its SSH worker (recorded in status) and its Pod is being made. */
  SshHostAssigned: 'SshHostAssigned',
  CreateContainerConfigError: 'CreateContainerConfigError',
  WorkflowNotFound: 'WorkflowNotFound',
  WorkflowInvalid: 'WorkflowInvalid',
  WorkflowSuspended: 'WorkflowSuspended',
  DeadlineExceeded: 'DeadlineExceeded',
  PodFailed: 'PodFailed',
  InputsInvalid: 'InputsInvalid',
  /** The rendered inputs do not fit in a ConfigMap. */
  InputsTooLarge: 'InputsTooLarge',
  /** The apiserver refused the inputs ConfigMap for now (retried with backoff). */
  InputsCreateFailed: 'InputsCreateFailed',
  /** The apiserver refused a run Pod for now: quota, Pod Security admission (retried). */
  PodCreateFailed: 'PodCreateFailed',
  /** The apiserver refused a run Pod as invalid: retrying cannot help. */
  PodInvalid: 'PodInvalid',
  /** An object with the run's deterministic name exists and is not the run's. */
  NameConflict: 'NameConflict',
  Progressing: 'Progressing',
  Reconciled: 'Reconciled',
  ConfigValid: 'ConfigValid',
  ConfigInvalid: 'ConfigInvalid',
  ConfigMapNotFound: 'ConfigMapNotFound',
  Suspended: 'Suspended',
  /** The tracker answered the last poll. */
  Polled: 'Polled',
} as const;
export type Reason = (typeof Reasons)[keyof typeof Reasons];

/** What a caller supplies to setCondition: everything but the transition time. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'>;

/** The condition of a type, if present. */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

export function isConditionTrue(
  conditions: readonly Condition[] | undefined,
  type: string,
): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/**
 * A new condition list with `next` set. lastTransitionTime moves to `now` only when the
 * status changes (or the type is new), so that it records the transition and not the last
 * reconcile; reason, message and observedGeneration are always taken from `next`.
 * The input list is not modified; the order of the other conditions is kept.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: ConditionUpdate,
  now: Date,
): Condition[] {
  const list = conditions ?? [];
  const previous = findCondition(list, next.type);
  const lastTransitionTime =
    previous && previous.status === next.status ? previous.lastTransitionTime : rfc3339(now);
  const updated: Condition = { ...next, lastTransitionTime };
  if (!previous) return [...list, updated];
  return list.map((condition) => (condition.type === next.type ? updated : condition));
}

/** A condition list without the given type. */
export function removeCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition[] {
  return (conditions ?? []).filter((condition) => condition.type !== type);
}

/** Kubernetes times are RFC 3339 with second precision (metav1.Time drops fractions). */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The time from `start` to `end` (RFC 3339), in whole seconds as Go prints a duration
 * (`45s`, `4m12s`, `1h0m5s`): the IssueRun's status.duration, which its Duration column
 * shows. Undefined when either time does not parse or the end is before the start.
 */
export function elapsed(start: string, end: string): string | undefined {
  const ms = Date.parse(end) - Date.parse(start);
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  const total = Math.round(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}
