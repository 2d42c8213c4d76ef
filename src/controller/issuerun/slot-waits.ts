import { InboxReasons, type InboxPending, type SlotStatus } from '../../api/index.js';

/**
 * A running slot whose agent waits for a person (docs/approvals.md) says so: AwaitingApproval
 * for a permission request, AwaitingAnswer for a question, with what it waits on (the oldest
 * request of its attempt) and why the issue may not show it (the tracker refused the comment).
 */
export function awaitingSlots(
  slots: readonly SlotStatus[],
  pending: readonly InboxPending[] | undefined,
): SlotStatus[] {
  return slots.map((slot) => {
    const request = pending?.find(
      (entry) => entry.slot === slot.slot && entry.attempt === (slot.attempt ?? entry.attempt),
    );
    if (slot.phase !== 'Running' || !request) return slot;
    const refused =
      request.commentError === undefined
        ? ''
        : `; the tracker refused the comment: ${request.commentError}`;
    return {
      ...slot,
      reason:
        request.kind === 'question' ? InboxReasons.AwaitingAnswer : InboxReasons.AwaitingApproval,
      message: `${request.title} (request ${request.id})${refused}`,
    };
  });
}

const WAITING_REASONS: readonly string[] = [
  InboxReasons.AwaitingApproval,
  InboxReasons.AwaitingAnswer,
];

/** The first slot that waits for a person, if any (its reason becomes the run's). */
export function waitingSlot(slots: readonly SlotStatus[]): SlotStatus | undefined {
  return slots.find((slot) => WAITING_REASONS.includes(slot.reason ?? ''));
}
