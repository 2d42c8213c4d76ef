import { InboxReasons, type InboxReason, type IssueRun } from '../../api/index.js';
import { sha256Hex } from '../../api/run-pod.js';
import { type LifecycleEvent, issueRunRef } from '../events/lifecycle.js';
import { EVENT_NOTE_LIMIT, truncateBytes } from '../events/records.js';
import { boundedName, uidFragment } from '../shared/object-names.js';

/**
 * The inbox's Events on the run (docs/approvals.md). Each is named by what it records (the
 * request id and what became of it, the steer's seq, the comment it answers), never by the
 * time it is seen: a controller that restarts before its status write computes the same
 * Events again and meets 409, so each is written once.
 */

const WARNINGS: ReadonlySet<InboxReason> = new Set([
  InboxReasons.ApprovalTimedOut,
  InboxReasons.TrackerCommentFailed,
  InboxReasons.ReplyIgnored,
]);

/** A part of an Event name from text a tracker chose (a comment id): a short digest. */
export const nameDigest = (text: string): string => sha256Hex(text).slice(0, 12);

export function inboxEvent(
  run: IssueRun,
  reason: InboxReason,
  suffix: string,
  text: string,
): LifecycleEvent {
  return {
    name: boundedName(
      run.metadata.name ?? '',
      `.${uidFragment(run.metadata.uid ?? '')}.inbox-${suffix}`,
      253,
    ),
    namespace: run.metadata.namespace ?? '',
    regarding: issueRunRef(run),
    action: 'Inbox',
    reason,
    type: WARNINGS.has(reason) ? 'Warning' : 'Normal',
    note: truncateBytes(text, EVENT_NOTE_LIMIT),
  };
}
