import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { parseTerminationSummary, type TerminationSummary } from '../../runner/summary.js';
import { AGENT_CONTAINER_NAME } from './constants.js';

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export type PodReason =
  | 'Pending'
  | 'Running'
  | 'Succeeded'
  | 'ImagePullFailed'
  | 'Unschedulable'
  | 'OOMKilled'
  | 'PodEvicted'
  | 'CreateContainerConfigError'
  | 'DeadlineExceeded'
  | 'HookFailed'
  | 'HookTimedOut'
  | 'AgentFailed'
  | 'Cancelled'
  | 'InputsInvalid'
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

export const DEFAULT_POD_STATUS_OPTIONS = {
  imagePullGraceMs: 120_000,
  pendingTimeoutMs: 600_000,
} as const;

const IMAGE_PULL_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName']);

const allContainerStatuses = (pod: V1Pod): V1ContainerStatus[] => [
  ...(pod.status?.initContainerStatuses ?? []),
  ...(pod.status?.containerStatuses ?? []),
];

/** Failure codes of the engine → the IssueRun reason that names them. */
export function reasonForErrorCode(code: string | undefined): PodReason {
  if (code === 'hook_failed') return 'HookFailed';
  if (code === 'hook_timed_out') return 'HookTimedOut';
  if (code === 'input_digest_mismatch') return 'InputsInvalid';
  if (code === 'cancelled') return 'Cancelled';
  return 'AgentFailed';
}

function waitingVerdict(pod: V1Pod, options: PodStatusOptions): PodOutcome | null {
  const age =
    options.now.getTime() - new Date(pod.metadata?.creationTimestamp ?? options.now).getTime();
  for (const status of allContainerStatuses(pod)) {
    const waiting = status.state?.waiting;
    if (!waiting?.reason) continue;
    const imagePull = IMAGE_PULL_REASONS.has(waiting.reason);
    if (!imagePull && waiting.reason !== 'CreateContainerConfigError') continue;
    const reason: PodReason = imagePull ? 'ImagePullFailed' : 'CreateContainerConfigError';
    const message = `container ${status.name}: ${waiting.reason}: ${waiting.message ?? ''}`.trim();
    const immediate = waiting.reason === 'InvalidImageName';
    if (immediate || age >= options.imagePullGraceMs) {
      return { phase: 'Failed', reason, message, finished: true, summary: null };
    }
    return {
      phase: 'Pending',
      reason: 'Pending',
      message,
      finished: false,
      summary: null,
      recheckAfterMs: options.imagePullGraceMs - age,
    };
  }
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === 'PodScheduled');
  if (scheduled?.status === 'False') {
    const message = scheduled.message ?? scheduled.reason ?? 'the Pod cannot be scheduled';
    if (age >= options.pendingTimeoutMs) {
      return { phase: 'Failed', reason: 'Unschedulable', message, finished: true, summary: null };
    }
    return {
      phase: 'Pending',
      reason: 'Pending',
      message,
      finished: false,
      summary: null,
      recheckAfterMs: options.pendingTimeoutMs - age,
    };
  }
  return null;
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
 * What a run Pod's status means for its slot. The Pod's own words go into the message;
 * the reason is one of the IssueRun reasons. Pending trouble (image pulls, scheduling,
 * config errors) is tolerated for a grace, as the kubelet keeps retrying.
 */
export function mapPodStatus(pod: V1Pod, options: PodStatusOptions): PodOutcome {
  const agentStatus = pod.status?.containerStatuses?.find(
    (status) => status.name === AGENT_CONTAINER_NAME,
  );
  const summary = parseTerminationSummary(agentStatus?.state?.terminated?.message);
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
      const verdict = waitingVerdict(pod, options);
      return (
        verdict ?? {
          phase: 'Pending',
          reason: 'Pending',
          message: 'the Pod is starting',
          finished: false,
          summary,
        }
      );
    }
  }
}
