import {
  API_VERSION,
  CONFIG_VALID,
  FINISHED,
  ISSUERUN_KIND,
  Reasons,
  SUCCEEDED,
  TRACKER_REACHABLE,
  WORKFLOW_KIND,
  findCondition,
  type Condition,
  type InboxReason,
  type IssueRun,
  type IssueRunStatus,
  type SlotStatus,
  type Workflow,
} from '../../api/index.js';
import { sha256Hex } from '../../api/run-pod.js';
import { boundedName, uidFragment } from '../shared/object-names.js';
import { EVENT_NOTE_LIMIT, truncateBytes } from './records.js';

/**
 * The Events of a run's life and of its Workflow's, read off the change from one status to
 * the next (pure). Each has a name made of what it is about (the run's uid, the slot and
 * attempt; the Workflow's uid and the state it leaves), never of the time it is seen: a
 * controller that restarts before its status write computes the same change and meets 409,
 * and one that restarts after it sees no change. So each is written once.
 */

/** The reasons of the lifecycle Events (hook and git Events have theirs in records.ts). */
export const LifecycleReasons = {
  /** On the Workflow: an issue got an IssueRun. */
  IssueDispatched: 'IssueDispatched',
  /** On the IssueRun: an attempt's Pod is running (per slot and attempt). */
  AttemptStarted: 'AttemptStarted',
  /** On the IssueRun: an attempt failed; the note names it and when the next starts. */
  RetryScheduled: 'RetryScheduled',
  /** On the IssueRun: it ended well (its condition reason: Succeeded, IssueCompleted). */
  RunSucceeded: 'RunSucceeded',
  /** On the IssueRun: it failed (the note leads with the condition reason). */
  RunFailed: 'RunFailed',
  /** On the IssueRun: it was cancelled (the note says what stopped it). */
  RunCancelled: 'RunCancelled',
  /** On the Workflow: its spec does not load (the note has the error). */
  ConfigRejected: 'ConfigRejected',
  /** On the Workflow: a poll failed after one that answered (or the first one failed). */
  TrackerUnreachable: 'TrackerUnreachable',
  /** On the Workflow: the tracker answered again after failing. */
  TrackerReachable: 'TrackerReachable',
  /** On the IssueRun: the archive cannot take its records (the note names the error). */
  ArchiveFailed: 'ArchiveFailed',
  /** On the IssueRun: released unarchived after --archive-give-up-after. */
  ArchiveAbandoned: 'ArchiveAbandoned',
  /** On the IssueRun: its branch's pull request was opened (or found open); the note links it. */
  PullRequestOpened: 'PullRequestOpened',
  /** On the IssueRun: review feedback asked for a round (the note says which and why). */
  ReviewRoundRequested: 'ReviewRoundRequested',
  /** On the IssueRun: the review loop ended (approved, merged, closed, out of rounds). */
  ReviewEnded: 'ReviewEnded',
  /** On the Workflow: a full warm-up started (docs/snapshots.md#warm-workspaces). */
  WarmUpStarted: 'WarmUpStarted',
  /** On the Workflow: a warm-up's snapshot is ready; runs start from it from now on. */
  WarmUpSucceeded: 'WarmUpSucceeded',
  /** On the Workflow: a warm-up failed (the note has the error); the last good snapshot stays. */
  WarmUpFailed: 'WarmUpFailed',
} as const;
export type LifecycleReason = (typeof LifecycleReasons)[keyof typeof LifecycleReasons];

export interface ObjectReference {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid?: string | undefined;
}

export interface LifecycleEvent {
  name: string;
  namespace: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  action: string;
  /** The inbox's Events (src/controller/inbox/events.ts) go through the same writer. */
  reason: LifecycleReason | InboxReason;
  type: 'Normal' | 'Warning';
  note: string;
}

const note = (text: string): string => truncateBytes(text, EVENT_NOTE_LIMIT);
const digest8 = (text: string): string => sha256Hex(text).slice(0, 8);

/** An Event's reference to an object of ours, an IssueRun or a Workflow (unset fields as ''). */
export function ownObjectRef(
  kind: typeof ISSUERUN_KIND | typeof WORKFLOW_KIND,
  object: { name?: string | undefined; namespace?: string | undefined; uid?: string | undefined },
): ObjectReference & { uid: string } {
  return {
    apiVersion: API_VERSION,
    kind,
    name: object.name ?? '',
    namespace: object.namespace ?? '',
    uid: object.uid ?? '',
  };
}

export const issueRunRef = (run: IssueRun) => ownObjectRef(ISSUERUN_KIND, run.metadata);

/**
 * An Event of the review loop on the run (docs/review-loop.md), named by what it records
 * (`suffix`: one per pull request, round or end), so a restart that writes it again meets 409.
 */
export function reviewEvent(
  run: IssueRun,
  reason: LifecycleReason,
  suffix: string,
  text: string,
): LifecycleEvent {
  return {
    name: runEventName(run, `review-${suffix}`),
    namespace: run.metadata.namespace ?? '',
    regarding: issueRunRef(run),
    action: 'Review',
    reason,
    type:
      reason === LifecycleReasons.ReviewEnded && /MaxRounds/.test(suffix) ? 'Warning' : 'Normal',
    note: note(text),
  };
}

/** `<run>.<uid8>.<suffix>`, as the hook Events are named. */
const runEventName = (run: IssueRun, suffix: string): string =>
  boundedName(run.metadata.name ?? '', `.${uidFragment(run.metadata.uid ?? '')}.${suffix}`, 253);

const slotOf = (status: IssueRunStatus | undefined, slot: SlotStatus): SlotStatus | undefined =>
  status?.slots?.find((entry) => entry.slot === slot.slot);

const hasStatus = (status: IssueRunStatus | undefined): boolean =>
  (status?.conditions ?? []).length > 0;

/** The Events a run's status change from `previous` to `next` calls for. */
// eslint-disable-next-line max-lines-per-function -- one sequence of steps, read top to bottom
export function runLifecycleEvents(
  run: IssueRun,
  previous: IssueRunStatus | undefined,
  next: IssueRunStatus,
): LifecycleEvent[] {
  const regarding = issueRunRef(run);
  const namespace = regarding.namespace;
  const events: LifecycleEvent[] = [];
  const owner = run.metadata.ownerReferences?.find(
    (reference) => reference.controller && reference.kind === WORKFLOW_KIND,
  );
  if (owner && !hasStatus(previous) && hasStatus(next)) {
    // The dispatcher's create is the Workflow's news; the run's first status says it is
    // there, whichever controller made it.
    events.push({
      name: boundedName(
        owner.name,
        `.${uidFragment(owner.uid)}.dispatched-${uidFragment(regarding.uid)}`,
        253,
      ),
      namespace,
      regarding: ownObjectRef(WORKFLOW_KIND, { name: owner.name, namespace, uid: owner.uid }),
      related: regarding,
      action: 'Dispatch',
      reason: LifecycleReasons.IssueDispatched,
      type: 'Normal',
      note: note(`dispatched ${run.spec.issue.identifier} as IssueRun ${regarding.name}`),
    });
  }
  for (const slot of next.slots ?? []) {
    const before = slotOf(previous, slot);
    const attempt = slot.attempt ?? 1;
    const same = before?.attempt === attempt;
    const pod = slot.podName
      ? { apiVersion: 'v1', kind: 'Pod', name: slot.podName, namespace }
      : undefined;
    /** An Event of this attempt: about the run, related to the attempt's Pod once it has one. */
    const attemptEvent = (
      step: string,
      what: Pick<LifecycleEvent, 'action' | 'reason' | 'type' | 'note'>,
    ): LifecycleEvent => ({
      name: runEventName(run, `${slot.slot}-${attempt}-${step}`),
      namespace,
      regarding,
      ...(pod ? { related: pod } : {}),
      ...what,
    });
    if (slot.phase === 'Running' && !(same && before?.phase === 'Running')) {
      events.push(
        attemptEvent('started', {
          action: 'StartAttempt',
          reason: LifecycleReasons.AttemptStarted,
          type: 'Normal',
          note: note(
            `attempt ${attempt} of slot ${slot.slot} started: Pod ${slot.podName ?? ''} is running`,
          ),
        }),
      );
    }
    if (
      slot.reason === Reasons.RetryScheduled &&
      !(same && before?.reason === Reasons.RetryScheduled)
    ) {
      events.push(
        attemptEvent('retry', {
          action: 'ScheduleRetry',
          reason: LifecycleReasons.RetryScheduled,
          type: 'Warning',
          // "attempt 1 failed (HookFailed: …); attempt 2 starts at <time>"
          note: note(`slot ${slot.slot}: ${slot.message ?? `attempt ${attempt} failed`}`),
        }),
      );
    }
  }
  const ended = findCondition(next.conditions, FINISHED)?.status === 'True';
  const endedBefore = findCondition(previous?.conditions, FINISHED)?.status === 'True';
  if (ended && !endedBefore) {
    const succeeded = findCondition(next.conditions, SUCCEEDED)?.status === 'True';
    const reason = next.reason ?? '';
    const kind = succeeded
      ? LifecycleReasons.RunSucceeded
      : reason === Reasons.Cancelled
        ? LifecycleReasons.RunCancelled
        : LifecycleReasons.RunFailed;
    events.push({
      name: runEventName(run, 'finished'),
      namespace,
      regarding,
      action: 'Finish',
      reason: kind,
      type: succeeded ? 'Normal' : 'Warning',
      note: note(`${reason}: ${next.message ?? ''}`),
    });
  }
  return events;
}

const workflowRef = (workflow: Workflow) => ownObjectRef(WORKFLOW_KIND, workflow.metadata);

/**
 * An Event of a Workflow's warm-up (src/controller/warm/), named by the build and what it
 * records (`<workflow>.<uid8>.warm-<build>-<step>`): a restart that writes it again meets 409.
 */
export function warmUpEvent(
  workflow: Workflow,
  reason:
    | typeof LifecycleReasons.WarmUpStarted
    | typeof LifecycleReasons.WarmUpSucceeded
    | typeof LifecycleReasons.WarmUpFailed,
  warmUp: { name: string; build: number },
  text: string,
): LifecycleEvent {
  const step = reason.replace(/^WarmUp/, '').toLowerCase();
  const regarding = workflowRef(workflow);
  return {
    name: boundedName(
      workflow.metadata.name ?? '',
      `.${uidFragment(workflow.metadata.uid ?? '')}.warm-${warmUp.build}-${step}`,
      253,
    ),
    namespace: regarding.namespace,
    regarding,
    related: { apiVersion: 'v1', kind: 'Pod', name: warmUp.name, namespace: regarding.namespace },
    action: 'WarmUp',
    reason,
    type: reason === LifecycleReasons.WarmUpFailed ? 'Warning' : 'Normal',
    note: note(text),
  };
}

/**
 * A name for a condition's change, from the Workflow and the condition it leaves (its
 * status, message and since when): the same change computed twice names the same Event.
 */
function transitionName(
  workflow: Workflow,
  kind: string,
  before: Condition | undefined,
  after: Condition,
): string {
  const from = before
    ? `${before.status}\n${before.reason}\n${before.message}\n${before.lastTransitionTime}`
    : 'none';
  const ref = workflowRef(workflow);
  return boundedName(
    ref.name,
    `.${uidFragment(ref.uid)}.${kind}-${digest8(`${from}\n${after.message}`)}`,
    253,
  );
}

/** The Events a Workflow's condition change from `previous` to `next` calls for. */
export function workflowLifecycleEvents(
  workflow: Workflow,
  previous: readonly Condition[] | undefined,
  next: readonly Condition[],
): LifecycleEvent[] {
  const regarding = workflowRef(workflow);
  const events: LifecycleEvent[] = [];
  const event = (
    kind: string,
    before: Condition | undefined,
    after: Condition,
    fields: Pick<LifecycleEvent, 'action' | 'reason' | 'type' | 'note'>,
  ) =>
    events.push({
      name: transitionName(workflow, kind, before, after),
      namespace: regarding.namespace,
      regarding,
      ...fields,
      note: note(fields.note),
    });

  const configBefore = findCondition(previous, CONFIG_VALID);
  const config = findCondition(next, CONFIG_VALID);
  // A new error is news, the same one seen again is not.
  if (
    config?.status === 'False' &&
    !(configBefore?.status === 'False' && configBefore.message === config.message)
  ) {
    event('config-rejected', configBefore, config, {
      action: 'LoadConfig',
      reason: LifecycleReasons.ConfigRejected,
      type: 'Warning',
      note: `${config.reason}: ${config.message}`,
    });
  }

  const trackerBefore = findCondition(previous, TRACKER_REACHABLE);
  const tracker = findCondition(next, TRACKER_REACHABLE);
  if (tracker?.status === 'False' && trackerBefore?.status !== 'False') {
    event('tracker-unreachable', trackerBefore, tracker, {
      action: 'PollTracker',
      reason: LifecycleReasons.TrackerUnreachable,
      type: 'Warning',
      note: `${tracker.reason}: ${tracker.message}`,
    });
  } else if (tracker?.status === 'True' && trackerBefore?.status === 'False') {
    event('tracker-reachable', trackerBefore, tracker, {
      action: 'PollTracker',
      reason: LifecycleReasons.TrackerReachable,
      type: 'Normal',
      note: `the tracker answers again (it failed since ${trackerBefore.lastTransitionTime}: ${trackerBefore.reason})`,
    });
  }
  return events;
}

/**
 * The archiver's Warning on a run: ArchiveFailed (once per error code: `<run>.<uid8>.archive-
 * failed-<code>`) or ArchiveAbandoned (once). Named by what it is about, so a restarted
 * archiver meets 409 rather than writing it twice.
 */
export function archiveEvent(
  run: IssueRun,
  reason: typeof LifecycleReasons.ArchiveFailed | typeof LifecycleReasons.ArchiveAbandoned,
  note: string,
  code = '',
): LifecycleEvent {
  const suffix =
    reason === LifecycleReasons.ArchiveAbandoned
      ? 'archive-abandoned'
      : `archive-failed-${code.replace(/[^a-z0-9]+/g, '-')}`;
  return {
    name: runEventName(run, suffix),
    namespace: run.metadata.namespace ?? '',
    regarding: issueRunRef(run),
    action: 'Archive',
    reason,
    type: 'Warning',
    note: truncateBytes(note, EVENT_NOTE_LIMIT),
  };
}
