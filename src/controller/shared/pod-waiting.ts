import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

/**
 * Why a Pod that has not started may never start: an image that cannot be pulled, a container
 * the kubelet cannot configure (a missing Secret or ConfigMap key), or no node that fits it.
 * Run Pods (issuerun/pod-status.ts) and warm-up Pods (warm/decide.ts) fail on the same causes,
 * each after its own grace: a pull may succeed on a retry, a node may free up.
 */
export interface WaitingProblem {
  reason: 'ImagePullFailed' | 'CreateContainerConfigError' | 'Unschedulable';
  message: string;
  /** Which grace applies: the image pull's, or the scheduling timeout's. */
  grace: 'imagePull' | 'pending';
  /** No wait can mend it (an image name that is not one). */
  immediate: boolean;
}

/** How long each may last before the Pod counts as failed (the controller's defaults). */
export const DEFAULT_POD_STATUS_OPTIONS = {
  imagePullGraceMs: 120_000,
  pendingTimeoutMs: 600_000,
} as const;

const IMAGE_PULL_REASONS = new Set(['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName']);

export const allContainerStatuses = (pod: V1Pod): V1ContainerStatus[] => [
  ...(pod.status?.initContainerStatuses ?? []),
  ...(pod.status?.containerStatuses ?? []),
];

/** The first cause that may keep the Pod from ever starting, or null. */
export function waitingProblem(pod: V1Pod): WaitingProblem | null {
  for (const status of allContainerStatuses(pod)) {
    const waiting = status.state?.waiting;
    if (!waiting?.reason) continue;
    const imagePull = IMAGE_PULL_REASONS.has(waiting.reason);
    if (!imagePull && waiting.reason !== 'CreateContainerConfigError') continue;
    return {
      reason: imagePull ? 'ImagePullFailed' : 'CreateContainerConfigError',
      message: `container ${status.name}: ${waiting.reason}: ${waiting.message ?? ''}`.trim(),
      grace: 'imagePull',
      immediate: waiting.reason === 'InvalidImageName',
    };
  }
  const scheduled = pod.status?.conditions?.find((condition) => condition.type === 'PodScheduled');
  if (scheduled?.status === 'False') {
    return {
      reason: 'Unschedulable',
      message: scheduled.message ?? scheduled.reason ?? 'the Pod cannot be scheduled',
      grace: 'pending',
      immediate: false,
    };
  }
  return null;
}
