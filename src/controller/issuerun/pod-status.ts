import type { V1Pod } from '@kubernetes/client-node';
import { parseTerminationSummary, type TerminationSummary } from '../../runner/summary.js';
import type { SlotErrorCode } from '../../workflow/errors.js';
import { AGENT_CONTAINER_NAME } from '../../api/run-pod.js';
import { allContainerStatuses, waitingProblem } from '../shared/pod-waiting.js';
import { admittedAt, kueueStop, podQueueName, queuedByKueue, queuedMessage } from './kueue.js';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export type PodReason =
  | 'Pending'
  | 'Running'
  | 'Succeeded'
  | 'ImagePullFailed'
  | 'Unschedulable'
  | 'Queued'
  | 'Preempted'
  | 'OOMKilled'
  | 'PodEvicted'
  | 'CreateContainerConfigError'
  | 'DeadlineExceeded'
  | 'HookFailed'
  | 'HookTimedOut'
  | 'HookKilled'
  | 'PodDeleted'
  | 'NodeLost'
  | 'AgentFailed'
  | 'RetryScheduled'
  | 'ContinuationScheduled'
  | 'AwaitingReview'
  | 'Cancelled'
  | 'InputsInvalid'
  | 'TemplateError'
  | 'WorkspaceError'
  | 'WorkspaceRepoMissing'
  | 'WorkspaceRepoNoCloneAddress'
  | 'WorkspaceBranchUnresolved'
  | 'WorkspaceCloneFailed'
  | 'WorkspaceSetupFailed'
  | 'SnapshotDigestMismatch'
  | 'SnapshotTreeMissing'
  | 'GitCredentialsInvalid'
  | 'SshConnectFailed'
  | 'BudgetExceeded'
  | 'PodFailed';

export interface PodOutcome {
  /** Failed also for a Pod we give up on while it is still Pending (image, scheduling). */
  phase: PodPhase;
  reason: PodReason;
  message: string;
  /** True when this Pod will not change any more as far as the run is concerned. */
  finished: boolean;
  /** The runner's summary, when the agent container left one. */
  summary: TerminationSummary | null;
  /** When still waiting out a grace, how long until the verdict may change. */
  recheckAfterMs?: number;
}

export interface PodStatusOptions {
  now: Date;
  /** How long ErrImagePull / ImagePullBackOff / CreateContainerConfigError may last. */
  imagePullGraceMs: number;
  /** How long a Pod may stay unschedulable. */
  pendingTimeoutMs: number;
}

export { DEFAULT_POD_STATUS_OPTIONS } from '../shared/pod-waiting.js';

/**
 * Failure codes of the engine → the IssueRun reason that names them. No default: a new code
 * does not compile until it is placed here.
 */
// eslint-disable-next-line max-lines-per-function -- an exhaustive switch, a line a code: splitting it would hide a code's reason
export function reasonForErrorCode(code: SlotErrorCode | undefined): PodReason {
  switch (code) {
    case 'hook_failed':
      return 'HookFailed';
    case 'hook_timed_out':
      return 'HookTimedOut';
    case 'hook_killed':
      return 'HookKilled';
    case 'cancelled':
      return 'Cancelled';
    // What the Pod was given does not hold: its inputs or snapshot, the WORKFLOW.md, the issue.
    case 'input_digest_mismatch':
    case 'missing_workflow_file':
    case 'file_unreadable':
    case 'workflow_parse_error':
    case 'workflow_front_matter_not_a_map':
    case 'invalid_workflow_config':
    case 'invalid_issue':
    case 'invalid_manifest':
    case 'not_a_workflow_file':
    case 'invalid_ssh_timeout':
      return 'InputsInvalid';
    case 'template_parse_error':
    case 'template_render_error':
      return 'TemplateError';
    case 'invalid_workspace_cwd':
    case 'workspace_is_root':
    case 'workspace_unsafe_symlink':
    case 'workspace_outside_root':
    case 'workspace_skill_source_symlink':
    case 'workspace_skill_source_unsupported':
    case 'workspace_skill_source_missing':
    case 'workspace_tree_symlink_escapes':
    case 'workspace_tree_unsupported_file':
    case 'workspace_error':
      return 'WorkspaceError';
    case 'workspace_repo_missing':
      return 'WorkspaceRepoMissing';
    case 'workspace_repo_no_clone_address':
      return 'WorkspaceRepoNoCloneAddress';
    case 'workspace_branch_unresolved':
      return 'WorkspaceBranchUnresolved';
    case 'workspace_clone_failed':
      return 'WorkspaceCloneFailed';
    case 'workspace_setup_failed':
      return 'WorkspaceSetupFailed';
    // The restored snapshot is not the tree the run was promised: it never runs a hook on it.
    case 'snapshot_digest_mismatch':
      return 'SnapshotDigestMismatch';
    case 'snapshot_tree_missing':
      return 'SnapshotTreeMissing';
    case 'invalid_git_credentials':
      return 'GitCredentialsInvalid';
    case 'ssh_connect':
      return 'SshConnectFailed';
    case 'budget_exceeded':
      return 'BudgetExceeded';
    case 'agent_bridge_missing':
    case 'agent_bridge_exited':
    case 'agent_protocol_error':
    case 'agent_response_timeout':
    case 'acp_turn_failed':
    case 'turn_timeout':
    case 'turn_stalled':
    case 'turn_cancelled':
    case 'turn_input_required':
    case 'approval_required':
    case 'issue_state_unavailable':
    case 'unsupported_tracker_kind':
    case 'invalid_tracker_config':
    case 'missing_tracker_secret':
    case 'tracker_request':
    case 'tracker_status':
    case 'tracker_response':
    case 'tracker_pagination':
    case 'tracker_rate_limited':
    case 'invalid_codehost_config':
    case 'codehost_request':
    case 'codehost_status':
    case 'codehost_response':
    case 'codehost_rate_limited':
    case 'invalid_pod_template':
    case 'runner_failed':
    case 'run_failed':
    case undefined:
      return 'AgentFailed';
  }
}

/**
 * A Pod stuck `age` ms: Failed for `reason` once past `graceMs` (or at once, for a cause no
 * wait can mend), else Pending until then.
 */
function failedPastGrace(
  graceMs: number,
  age: number,
  reason: PodReason,
  message: string,
  atOnce = false,
): PodOutcome {
  if (atOnce || age >= graceMs)
    return { phase: 'Failed', reason, message, finished: true, summary: null };
  return {
    phase: 'Pending',
    reason: 'Pending',
    message,
    finished: false,
    summary: null,
    recheckAfterMs: graceMs - age,
  };
}

function waitingVerdict(pod: V1Pod, options: PodStatusOptions): PodOutcome | null {
  const queue = podQueueName(pod);
  // Held by Kueue: no grace runs out while the queue waits (docs/queues.md).
  if (queue !== undefined && queuedByKueue(pod)) return queuedOutcome(queue);
  const since = admittedAt(pod) ?? options.now.getTime();
  const age = options.now.getTime() - since;
  const problem = waitingProblem(pod);
  if (problem === null) return null;
  const grace = problem.grace === 'imagePull' ? options.imagePullGraceMs : options.pendingTimeoutMs;
  return failedPastGrace(grace, age, problem.reason, problem.message, problem.immediate);
}

function failedVerdict(pod: V1Pod, summary: TerminationSummary | null): PodOutcome {
  const base = { phase: 'Failed' as const, finished: true, summary };
  if (pod.status?.reason === 'Evicted') {
    return { ...base, reason: 'PodEvicted', message: pod.status.message ?? 'the Pod was evicted' };
  }
  for (const status of allContainerStatuses(pod)) {
    const terminated = status.state?.terminated;
    if (terminated?.reason === 'OOMKilled') {
      return {
        ...base,
        reason: 'OOMKilled',
        message: `container ${status.name} was OOMKilled (exit code ${terminated.exitCode})`,
      };
    }
  }
  if (pod.status?.reason === 'DeadlineExceeded') {
    return {
      ...base,
      reason: 'DeadlineExceeded',
      message: pod.status.message ?? 'the Pod ran longer than its activeDeadlineSeconds',
    };
  }
  if (summary && !summary.succeeded) {
    const reason = summary.cancelled ? 'Cancelled' : reasonForErrorCode(summary.errorCode);
    return { ...base, reason, message: summary.error ?? summary.errorCode ?? 'the run failed' };
  }
  const failedContainer = allContainerStatuses(pod).find(
    (status) => (status.state?.terminated?.exitCode ?? 0) !== 0,
  );
  const terminated = failedContainer?.state?.terminated;
  const message = failedContainer
    ? `container ${failedContainer.name} exited with code ${terminated?.exitCode}${
        terminated?.message ? `: ${terminated.message}` : ''
      }`
    : (pod.status?.message ?? 'the Pod failed');
  return { ...base, reason: 'PodFailed', message };
}

/**
 * A kubelet stops a deleted Pod's containers within its grace period and the Pod object goes
 * away. A Pod still there this long after its grace ended sits on a node that does not act
 * (lost, partitioned, its kubelet dead): nothing will ever report its end. The Pod object is
 * left to Kubernetes (its node may come back and finish the deletion); the attempt is over.
 */
export const NODE_LOST_AFTER_GRACE_MS = 15_000;

/** Ms until a deleted, unfinished Pod counts as stranded on a lost node (≤ 0: it does). */
export function strandedInMs(pod: V1Pod, now: Date): number | undefined {
  const deletion = pod.metadata?.deletionTimestamp;
  const phase = pod.status?.phase;
  if (!deletion || phase === 'Succeeded' || phase === 'Failed') return undefined;
  return new Date(deletion).getTime() + NODE_LOST_AFTER_GRACE_MS - now.getTime();
}

function strandedVerdict(pod: V1Pod, now: Date): PodOutcome | null {
  const remaining = strandedInMs(pod, now);
  if (remaining === undefined || remaining > 0) return null;
  const node = pod.spec?.nodeName ? `node ${pod.spec.nodeName}` : 'its node';
  const deletedAt = new Date(pod.metadata?.deletionTimestamp ?? now).toISOString();
  const taint = pod.status?.conditions?.find(
    (condition) => condition.type === 'DisruptionTarget' && condition.status === 'True',
  );
  return {
    phase: 'Failed',
    reason: 'NodeLost',
    message:
      `the run Pod's grace period ended at ${deletedAt}${taint?.reason ? ` (${taint.reason})` : ''} ` +
      `and ${node} has not stopped it ${NODE_LOST_AFTER_GRACE_MS / 1000} s later: the node is lost or not answering; its attempt failed`,
    finished: true,
    summary: null,
  };
}

/** A slot whose Pod Kueue holds: Pending, for as long as the queue takes. */
export const queuedOutcome = (queue: string, kueueSays?: string): PodOutcome => ({
  phase: 'Pending',
  reason: 'Queued',
  message: queuedMessage(queue, kueueSays),
  finished: false,
  summary: null,
});

/**
 * Kueue stopped the Pod (preempted, or evicted otherwise): the attempt failed for that, not
 * for the signal its containers died of; finished once the Pod has stopped.
 */
function kueueStoppedVerdict(pod: V1Pod, summary: TerminationSummary | null): PodOutcome | null {
  const stop = kueueStop(pod);
  if (!stop) return null;
  // An attempt that had ended well before Kueue's word arrived keeps its success.
  if (summary?.succeeded && !summary.cancelled) return null;
  const phase = pod.status?.phase;
  const stopped = phase === 'Succeeded' || phase === 'Failed';
  return {
    phase: stopped ? 'Failed' : 'Running',
    reason: stop.preempted ? 'Preempted' : 'PodEvicted',
    message: stop.message,
    finished: stopped,
    summary,
  };
}

/**
 * What a slot says of a Pod that exists and has no status yet, and of one the controller has
 * just created before its cache has it: the same words, so the Pod's arrival in the cache
 * changes nothing to write (it was a second status write for every run).
 */
export const POD_STARTING: PodOutcome = {
  phase: 'Pending',
  reason: 'Pending',
  message: 'the Pod is starting',
  finished: false,
  summary: null,
};

/**
 * What a run Pod's status means for its slot. The Pod's own words go into the message;
 * the reason is one of the IssueRun reasons. Pending trouble (image pulls, scheduling,
 * config errors) is tolerated for a grace, as the kubelet keeps retrying.
 */
export function mapPodStatus(pod: V1Pod, options: PodStatusOptions): PodOutcome {
  const agentStatus = pod.status?.containerStatuses?.find(
    (status) => status.name === AGENT_CONTAINER_NAME,
  );
  const summary = parseTerminationSummary(agentStatus?.state?.terminated?.message);
  const stranded = strandedVerdict(pod, options.now);
  if (stranded) return stranded;
  const recheck = strandedInMs(pod, options.now);
  const outcome = kueueStoppedVerdict(pod, summary) ?? mapLivePodStatus(pod, options, summary);
  return recheck === undefined || outcome.finished
    ? outcome
    : { ...outcome, recheckAfterMs: Math.min(outcome.recheckAfterMs ?? Infinity, recheck) };
}

function mapLivePodStatus(
  pod: V1Pod,
  options: PodStatusOptions,
  summary: TerminationSummary | null,
): PodOutcome {
  switch (pod.status?.phase) {
    case 'Succeeded':
      return {
        phase: 'Succeeded',
        reason: 'Succeeded',
        message: 'the run succeeded',
        finished: true,
        summary,
      };
    case 'Failed':
      return failedVerdict(pod, summary);
    case 'Running':
      return {
        phase: 'Running',
        reason: 'Running',
        message: 'the runner is running',
        finished: false,
        summary,
      };
    case undefined: // no status yet: as Pending
    default: {
      return waitingVerdict(pod, options) ?? { ...POD_STARTING, summary };
    }
  }
}
