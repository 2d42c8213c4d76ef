import type { V1Pod } from '@kubernetes/client-node';
import { podGroupName } from '../shared/object-names.js';
import type { ObjectIdentity } from '../shared/owner.js';
import {
  Reasons,
  KUEUE_ADMISSION_GATE,
  KUEUE_POD_GROUP_LABEL,
  KUEUE_POD_GROUP_TOTAL_ANNOTATION,
  KUEUE_QUEUE_LABEL,
  KUEUE_RETRIABLE_IN_GROUP_ANNOTATION,
  KUEUE_TERMINATION_CONDITION,
  type IssueRun,
  type Workflow,
} from '../../api/index.js';

/**
 * Kueue's plain-Pod integration, seen from the run Pods (docs/queues.md): what a Pod carries
 * to be queued, and what Kueue's marks on it mean for the slot.
 */

/** The LocalQueue of a run's Pods: the run's own spec.queueName, else its Workflow's. */
export const runQueueName = (run: IssueRun, workflow: Workflow): string | undefined =>
  run.spec.queueName ?? workflow.spec.queueName;

export interface RunPodQueue {
  /** The LocalQueue, in the run's namespace. */
  name: string;
  /** The Pods started together (more than one): one Kueue Workload, admitted whole. */
  group?: { name: string; totalCount: number } | undefined;
}

/**
 * The Kueue queue of the Pods one start makes: Pods started together (an ensemble's slots, or
 * slots retried at once) are one Pod group, so Kueue admits them all or none.
 */
export function attemptQueue(
  run: IssueRun,
  workflow: Workflow,
  identity: ObjectIdentity,
  attempt: number,
  slots: readonly { slot: number }[],
): RunPodQueue | undefined {
  const name = runQueueName(run, workflow);
  if (name === undefined) return undefined;
  if (slots.length < 2) return { name };
  const first = Math.min(...slots.map((entry) => entry.slot));
  return {
    name,
    group: { name: podGroupName(identity, attempt, first), totalCount: slots.length },
  };
}

/** The labels and annotations that hand a run Pod to Kueue. */
export function kueueMetadata(queue: RunPodQueue | undefined): {
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  if (!queue) return { labels: {}, annotations: {} };
  const labels: Record<string, string> = { [KUEUE_QUEUE_LABEL]: queue.name };
  if (!queue.group) return { labels, annotations: {} };
  labels[KUEUE_POD_GROUP_LABEL] = queue.group.name;
  return {
    labels,
    annotations: {
      [KUEUE_POD_GROUP_TOTAL_ANNOTATION]: String(queue.group.totalCount),
      [KUEUE_RETRIABLE_IN_GROUP_ANNOTATION]: 'false',
    },
  };
}

/** The LocalQueue a run Pod was handed to; undefined for a Pod Kueue does not queue. */
export const podQueueName = (pod: V1Pod): string | undefined =>
  pod.metadata?.labels?.[KUEUE_QUEUE_LABEL];

/** Kueue holds the Pod: its admission gate is still on it. */
export const queuedByKueue = (pod: V1Pod): boolean =>
  (pod.spec?.schedulingGates ?? []).some((gate) => gate.name === KUEUE_ADMISSION_GATE);

/** What a slot says while Kueue holds its Pod, before Kueue's own words are read. */
export const queuedMessage = (queue: string, kueueSays?: string): string =>
  `queued in LocalQueue ${queue}: ${kueueSays ?? 'waiting for Kueue to admit the Pod'}`;

/**
 * Kueue's word that it stopped the Pod to preempt it: the TerminationTarget condition it sets
 * before deleting the Pod, its reason the eviction's (WorkloadEvictedDueToPreempted, or
 * another: a ClusterQueue stopped, the Workload deleted), its message the eviction's
 * ("Preempted to accommodate …"). Null for a Pod Kueue did not stop.
 */
export function kueueStop(pod: V1Pod): { preempted: boolean; message: string } | null {
  const condition = pod.status?.conditions?.find(
    (entry) => entry.type === KUEUE_TERMINATION_CONDITION && entry.status === 'True',
  );
  if (!condition || podQueueName(pod) === undefined) return null;
  const reason = condition.reason ?? '';
  const said = condition.message ? `: ${condition.message}` : '';
  // The message is the fallback: a release that gives the bare WorkloadEvicted as the reason
  // still says "Preempted to accommodate a workload …" for a preemption.
  return {
    preempted: reason.endsWith('Preempted') || /^Preempted\b/.test(condition.message ?? ''),
    message: `Kueue stopped the attempt (${reason || 'evicted'})${said}`,
  };
}

/**
 * When Kueue let the Pod go: a gated Pod has no PodScheduled condition of its own making, so
 * the first one after the gate went (or the Pod's creation, for a Pod never queued) is where
 * the wait for a node starts. Timeouts of a start count from here, not from the queue.
 */
export function admittedAt(pod: V1Pod): number | undefined {
  const created = pod.metadata?.creationTimestamp;
  if (!created) return undefined;
  const createdMs = new Date(created).getTime();
  if (podQueueName(pod) === undefined) return createdMs;
  const scheduled = pod.status?.conditions?.find((entry) => entry.type === 'PodScheduled');
  if (!scheduled?.lastTransitionTime || scheduled.reason === 'SchedulingGated') return createdMs;
  return Math.max(createdMs, new Date(scheduled.lastTransitionTime).getTime());
}

/**
 * A slot Kueue is stopping that the status does not say so yet: written at once, since the
 * Pod is deleted next and only the status is left to tell a preemption from a deletion.
 */
export const newlyPreempted = (
  run: IssueRun,
  views: readonly { slot: number; outcome: { reason: string; finished: boolean } | null }[],
): boolean =>
  views.some(
    (view) =>
      view.outcome?.reason === Reasons.Preempted &&
      !view.outcome.finished &&
      run.status?.slots?.find((slot) => slot.slot === view.slot)?.reason !== Reasons.Preempted,
  );
