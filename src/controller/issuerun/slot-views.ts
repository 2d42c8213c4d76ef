import { Reasons, type IssueRun, type SlotStatus } from '../../api/index.js';
import { AGENT_CONTAINER_NAME } from '../../api/run-pod.js';
import { LABEL_ATTEMPT, LABEL_SLOT } from '../shared/constants.js';
import type { PodObject } from '../shared/resources.js';
import type { LogFollowers } from './log-follower.js';
import { slotAttempt } from './retry.js';
import { mapPodStatus, type PodOutcome, type PodStatusOptions } from './pod-status.js';
import type { SlotView } from './status.js';

/** The Pods the run owns, by its uid (labels may be shortened; ownership is exact). */
export function runPods(pods: readonly PodObject[], run: IssueRun): PodObject[] {
  return pods.filter((pod) =>
    (pod.metadata?.ownerReferences ?? []).some(
      (owner) => owner.uid === run.metadata.uid && owner.controller,
    ),
  );
}

const agentStarted = (pod: PodObject): boolean => {
  const state = pod.status?.containerStatuses?.find(
    (status) => status.name === AGENT_CONTAINER_NAME,
  )?.state;
  return Boolean(state?.running || state?.terminated);
};

const podSlot = (pod: PodObject): number => Number(pod.metadata?.labels?.[LABEL_SLOT] ?? 0);
const podAttempt = (pod: PodObject): number => Number(pod.metadata?.labels?.[LABEL_ATTEMPT] ?? 1);

/**
 * What each slot's Pod says, in slot order: its mapped status and, once the agent
 * container has started, its log (followed while the Pod lives). Only the Pod of each
 * slot's current attempt counts: those of earlier attempts have had their say.
 */
export function observeSlots(
  run: IssueRun,
  pods: readonly PodObject[],
  followers: LogFollowers,
  options: PodStatusOptions,
): SlotView[] {
  return pods
    .filter((pod) => podAttempt(pod) === slotAttempt(run, podSlot(pod)))
    .map((pod) => {
      const name = pod.metadata?.name ?? '';
      const namespace = pod.metadata?.namespace ?? '';
      const slot = podSlot(pod);
      const attempt = podAttempt(pod);
      const outcome = deletedIsNotCancelled(pod, mapPodStatus(pod, options));
      const podUid = pod.metadata?.uid ?? '';
      let log = followers.get(podUid);
      // A lost node serves no log: its attempt ends with what was read.
      if (outcome.reason === 'NodeLost') log = followers.abandon(podUid);
      else if (agentStarted(pod) || log) {
        const owner = pod.metadata?.ownerReferences?.find((reference) => reference.controller);
        log = followers.ensure(
          {
            namespace,
            podName: name,
            podUid,
            runKey: `${namespace}/${owner?.name ?? ''}`,
            runUid: owner?.uid ?? '',
            slot,
            attempt,
          },
          !outcome.finished && !pod.metadata?.deletionTimestamp,
          outcome.summary,
        );
      }
      const created = pod.metadata?.creationTimestamp;
      const podCreatedAt = created instanceof Date ? created.toISOString() : created;
      return { slot, attempt, podName: name, outcome, log, podCreatedAt };
    })
    .sort((a, b) => a.slot - b.slot);
}

/** The outcome of a slot whose Pod is gone from the cache: nothing about it will change. */
const goneOutcome = (
  phase: PodOutcome['phase'],
  reason: PodOutcome['reason'],
  message: string,
): PodOutcome => ({ phase, reason, message, finished: true, summary: null });

const DELETED_MESSAGE =
  'the run Pod was deleted before it finished (not by a cancellation of the run); its attempt failed';

/**
 * A runner stopped by its Pod's deletion says "cancelled". Unless the run was cancelled
 * (cancelledSlots), nobody cancelled it: the Pod was deleted, and the attempt failed so.
 */
function deletedIsNotCancelled(pod: PodObject, outcome: PodOutcome): PodOutcome {
  if (!pod.metadata?.deletionTimestamp || !outcome.finished || outcome.reason !== 'Cancelled') {
    return outcome;
  }
  return { ...outcome, phase: 'Failed', reason: 'PodDeleted', message: DELETED_MESSAGE };
}

/**
 * Slots the status lists whose Pod is gone from the cache (the caller has ruled out a cache
 * that has not caught up with a create). A Pod is never created twice for one attempt: a
 * slot whose Pod was deleted ends PodDeleted, with what its log said, unless the status
 * already recorded its end.
 */
export function deletedSlots(
  run: IssueRun,
  pods: readonly PodObject[],
  followers: LogFollowers,
): SlotView[] {
  const present = new Set(pods.map((pod) => pod.metadata?.name));
  const logs = followers.ofRun(run.metadata.uid ?? '');
  return (run.status?.slots ?? [])
    .filter((slot) => slot.podName && !present.has(slot.podName) && !hostAssigned(slot))
    .map((slot) => {
      const podName = slot.podName ?? '';
      const log = logs.find((state) => state.podName === podName);
      const ended = slot.phase === 'Succeeded' || slot.phase === 'Failed';
      // Kueue deletes the Pods it preempts: the last word seen of the Pod said so.
      const preempted = !ended && slot.reason === Reasons.Preempted;
      const outcome = preempted
        ? goneOutcome('Failed', 'Preempted', slot.message ?? '')
        : ended
          ? goneOutcome(
              slot.phase === 'Succeeded' ? 'Succeeded' : 'Failed',
              (slot.reason ?? 'PodFailed') as PodOutcome['reason'],
              slot.message ?? '',
            )
          : goneOutcome('Failed', 'PodDeleted', DELETED_MESSAGE);
      const view: SlotView = {
        slot: slot.slot,
        attempt: slotAttempt(run, slot.slot),
        podName,
        outcome,
        log,
      };
      if (slot.nextAttemptTime) view.nextAttemptTime = slot.nextAttemptTime;
      return view;
    });
}

/** A slot whose SSH worker was recorded for an attempt whose Pod was not made yet. */
const hostAssigned = (slot: SlotStatus): boolean => slot.reason === Reasons.SshHostAssigned;

/**
 * Slots with an SSH worker recorded (SshHostAssigned) and no Pod: the controller stopped
 * between recording the host and making the Pod. Their attempt is still to start, on that
 * host; they are not deleted Pods.
 */
export function assignedSlots(run: IssueRun, pods: readonly PodObject[]): SlotView[] {
  const present = new Set(pods.map((pod) => pod.metadata?.name));
  return (run.status?.slots ?? [])
    .filter((slot) => hostAssigned(slot) && !present.has(slot.podName))
    .map((slot) => ({
      slot: slot.slot,
      attempt: slotAttempt(run, slot.slot),
      podName: slot.podName ?? '',
      outcome: null,
    }));
}

/**
 * The slots of a cancelled run: its Pods in the cache, and those already deleted whose logs
 * were read (what after_run printed is still owed to the status).
 */
export function cancelledSlots(
  run: IssueRun,
  pods: readonly PodObject[],
  followers: LogFollowers,
  options: PodStatusOptions,
): SlotView[] {
  const views = observeSlots(run, pods, followers, options);
  for (const log of followers.ofRun(run.metadata.uid ?? '')) {
    if (views.some((view) => view.slot === log.slot)) continue;
    if (log.attempt !== slotAttempt(run, log.slot)) continue;
    const outcome = goneOutcome('Failed', 'Cancelled', 'the Pod was deleted');
    views.push({ slot: log.slot, attempt: log.attempt, podName: log.podName, outcome, log });
  }
  // A slot with its SSH worker recorded and no Pod yet ends here too, or the run never would.
  for (const view of assignedSlots(run, pods)) {
    if (views.some((each) => each.slot === view.slot)) continue;
    const message = 'cancelled before its Pod was created';
    views.push({ ...view, outcome: goneOutcome('Failed', 'Cancelled', message) });
  }
  return views.sort((a, b) => a.slot - b.slot);
}

/** Whether some slot's log is still being read (its records are owed to the status). */
export const logsPending = (views: readonly SlotView[]): boolean =>
  views.some(
    (view) => view.log?.streaming || (view.log && !view.log.completed && !view.log.drained),
  );

/**
 * Whether every Event for the records read so far from the slots' logs is written, waiting
 * at most `withinMs`. A write the apiserver refused for a while (restarting, etcd away) is
 * tried again for up to a minute (events/recorder.ts): the caller requeues rather than hold
 * a worker, and the verdict or the next attempt goes once the Events are in.
 */
export async function eventsFlushed(
  views: readonly SlotView[],
  withinMs: number,
): Promise<boolean> {
  const written = Promise.all(views.flatMap((view) => (view.log ? [view.log.flushed] : [])));
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), withinMs);
  });
  try {
    return await Promise.race([written.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
