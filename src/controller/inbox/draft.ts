import {
  INBOX_LIMITS,
  InboxReasons,
  rfc3339,
  type InboxDecision,
  type InboxPending,
  type InboxStatus,
  type InboxSteer,
  type IssueRun,
} from '../../api/index.js';
import type { ApprovalsConfig } from '../../workflow/approvals-config.js';
import type { LifecycleEvent } from '../events/lifecycle.js';
import { replyCommentText, type ReplyKind } from './comment-text.js';
import { inboxEvent } from './events.js';
import { timeOf } from './requests.js';

/**
 * The inbox of one look while decide.ts works on it: the status as it becomes, and what the
 * look will post, record and write. Mutable on purpose and never shared: decide() makes one,
 * changes it step by step and hands back a plain plan.
 */

/** A comment the look posts on the issue. */
export interface InboxPost {
  /** Names the post (act.ts marks the body with it): one already on the issue is not posted again. */
  key: string;
  /** A request comment, or the reply it is (for logs and tests; the body says it). */
  kind: 'request' | ReplyKind;
  body: string;
  /** A request comment: the pending request it is, which gets its id or the refusal. */
  requestId?: string;
}

export interface Draft {
  run: IssueRun;
  config: ApprovalsConfig;
  now: Date;
  pending: InboxPending[];
  decided: InboxDecision[];
  steers: InboxSteer[];
  steerSeq: number;
  handled: string[];
  stopRequested: boolean;
  /** Who wrote the /stop this look acted on (the run's end quotes it). */
  stoppedBy: string | null;
  posts: InboxPost[];
  events: LifecycleEvent[];
  problem: { reason: string; message: string } | null;
}

export function createDraft(run: IssueRun, config: ApprovalsConfig, now: Date): Draft {
  const inbox: InboxStatus = run.status?.inbox ?? {};
  return {
    run,
    config,
    now,
    pending: (inbox.pending ?? []).map((entry) => ({ ...entry })),
    decided: [...(inbox.decided ?? [])],
    steers: [...(inbox.steers ?? [])],
    steerSeq: inbox.steerSeq ?? 0,
    handled: [...(inbox.handledComments ?? [])],
    stopRequested: inbox.stopRequested === true,
    stoppedBy: null,
    posts: [],
    events: [],
    problem: null,
  };
}

export type ReplyData = Parameters<typeof replyCommentText>[1];

export function reply(draft: Draft, key: string, kind: ReplyKind, data: ReplyData): void {
  draft.posts.push({ key: `reply:${key}`, kind, body: replyCommentText(kind, data) });
}

export const isHandled = (draft: Draft, id: string): boolean => draft.handled.includes(id);

export function handle(draft: Draft, id: string): void {
  if (!isHandled(draft, id)) draft.handled.push(id);
}

const VERB: Record<InboxDecision['verdict'], string> = {
  approve: 'approved',
  approve_always: 'approved for the rest of the attempt',
  deny: 'denied',
  answer: 'answered',
  timeout: 'timed out',
};

function decisionEvent(draft: Draft, request: InboxPending, decision: InboxDecision) {
  const who = decision.by ? ` by ${decision.by}` : '';
  const why = decision.reason ? `: ${decision.reason}` : '';
  const verb =
    request.kind === 'question' && decision.verdict === 'deny'
      ? 'declined'
      : VERB[decision.verdict];
  const reason =
    decision.verdict === 'timeout'
      ? InboxReasons.ApprovalTimedOut
      : request.kind === 'question'
        ? InboxReasons.QuestionAnswered
        : decision.verdict === 'deny'
          ? InboxReasons.ApprovalDenied
          : InboxReasons.ApprovalGranted;
  const tail =
    decision.verdict === 'timeout' ? `; agent.approvals.on_timeout: ${draft.config.onTimeout}` : '';
  const what = request.kind === 'question' ? 'question' : 'permission request';
  const text = `${what} ${request.id} ${verb}${who} (via ${decision.via})${why}${tail}: ${request.title}`;
  return inboxEvent(draft.run, reason, `${request.id}-decided`, text);
}

/**
 * Ends a pending request with its decision: into the decided list, its Event, and the reply
 * that tells the issue (none: the decision needs no word, as at the end of a run).
 */
export function settle(
  draft: Draft,
  request: InboxPending,
  decision: Omit<InboxDecision, 'requestId' | 'at'>,
  replyKind: ReplyKind | null,
  data: ReplyData = {},
): void {
  const made: InboxDecision = { requestId: request.id, ...decision, at: rfc3339(draft.now) };
  draft.pending = draft.pending.filter((entry) => entry.id !== request.id);
  draft.decided.push(made);
  draft.events.push(decisionEvent(draft, request, made));
  if (replyKind === null) return;
  const base: ReplyData = { requestId: request.id, title: request.title };
  if (decision.reason !== undefined) base.reason = decision.reason;
  if (decision.by !== undefined) base.decidedBy = decision.by;
  if (decision.verdict === 'timeout') base.onTimeout = draft.config.onTimeout;
  reply(draft, `decided:${request.id}`, replyKind, { ...base, ...data });
}

/** Every request whose deadline is at or before `at` times out (agent.approvals.on_timeout). */
export function timeOut(draft: Draft, at: number, strictlyBefore = false): void {
  for (const request of [...draft.pending]) {
    const deadline = timeOf(request.deadline, Infinity);
    if (strictlyBefore ? deadline < at : deadline <= at) {
      settle(draft, request, { verdict: 'timeout', via: 'timeout' }, 'timed_out');
    }
  }
}

/** The reply a decision gets on the issue. */
export function replyKindOf(verdict: InboxDecision['verdict']): ReplyKind {
  switch (verdict) {
    case 'approve':
      return 'approved';
    case 'approve_always':
      return 'approved_always';
    case 'deny':
      return 'denied';
    case 'answer':
      return 'answered';
    case 'timeout':
      return 'timed_out';
  }
}

/** The inbox as the look leaves it, every list bounded to its newest entries. */
export function inboxOf(draft: Draft, read: boolean): InboxStatus {
  const previous = draft.run.status?.inbox ?? {};
  const inbox: InboxStatus = {
    pending: draft.pending.slice(0, INBOX_LIMITS.pending),
    decided: draft.decided.slice(-INBOX_LIMITS.decided),
    steers: draft.steers.slice(-INBOX_LIMITS.steers),
    steerSeq: draft.steerSeq,
    handledComments: draft.handled.slice(-INBOX_LIMITS.handledComments),
  };
  const lastRead = read ? rfc3339(draft.now) : previous.lastReadTime;
  if (lastRead !== undefined) inbox.lastReadTime = lastRead;
  if (draft.stopRequested) inbox.stopRequested = true;
  // A read that answered clears the last problem; one that did not keep it (the reconciler
  // writes a tracker outage over it).
  const problem = draft.problem ?? (read ? null : pickProblem(previous));
  if (problem) {
    inbox.reason = problem.reason;
    inbox.message = problem.message.slice(0, INBOX_LIMITS.reasonLength);
  }
  return inbox;
}

const pickProblem = (inbox: InboxStatus) =>
  inbox.reason ? { reason: inbox.reason, message: inbox.message ?? '' } : null;
