import {
  INBOX_LIMITS,
  InboxReasons,
  type InboxPending,
  type InboxStatus,
  type IssueRun,
  type SpecDecision,
} from '../../api/index.js';
import type { TrackerComment } from '../../tracker/types.js';
import type { ApprovalsConfig } from '../../workflow/approvals-config.js';
import type { LifecycleEvent } from '../events/lifecycle.js';
import { requestCommentText } from './comment-text.js';
import { readComments } from './decide-comments.js';
import {
  createDraft,
  inboxOf,
  reply,
  settle,
  timeOut,
  type Draft,
  type InboxPost,
} from './draft.js';
import { inboxEvent } from './events.js';
import { attemptOver, requestAnnotations, runFinished, steeredMark } from './requests.js';

export type { InboxPost } from './draft.js';

/**
 * What the inbox does about one run (docs/approvals.md), decided from the run (its spec,
 * status.inbox and the requests in its annotations), the Workflow's agent.approvals and the
 * issue's comments. Pure: the reconciler reads, this decides, act.ts writes. The order is
 * the one time gives: requests are recorded first, then comments are read oldest first (a
 * request whose deadline passed before a comment was written timed out before it), then
 * decisions made in Kubernetes, then the deadlines that passed by now.
 */

export interface InboxInputs {
  run: IssueRun;
  config: ApprovalsConfig;
  /** The issue's comments, or null when they were not read this look. */
  comments: readonly TrackerComment[] | null;
  /** Author keys of the tracker user Lorenz (and its agents) writes as (self-authors.ts). */
  self?: readonly string[];
  now: Date;
}

export interface InboxPlan {
  /** The next status.inbox. */
  inbox: InboxStatus;
  /** Request comments and replies to post, in order. */
  posts: InboxPost[];
  events: LifecycleEvent[];
  /** Request annotations recorded (or unreadable): removed once the status is written. */
  removeAnnotations: string[];
  /** Set: patch spec.cancelRequested (a /stop), with the note the run's end quotes. */
  cancel: { note: string } | null;
}

export function decideInbox(inputs: InboxInputs): InboxPlan {
  const { run, config, now } = inputs;
  const draft = createDraft(run, config, now);
  const removeAnnotations = recordRequests(draft);
  if (inputs.comments !== null) readComments(draft, inputs.comments, inputs.self);
  applySpecDecisions(draft, run.spec.decisions ?? []);
  timeOut(draft, now.getTime());
  endWithAttempts(draft);
  askPending(draft, inputs.comments !== null);
  const stopped = draft.stopRequested && run.spec.cancelRequested !== true && !runFinished(run);
  return {
    inbox: inboxOf(draft, inputs.comments !== null),
    posts: draft.posts,
    events: draft.events,
    removeAnnotations,
    cancel: stopped ? { note: stopNote(draft) } : null,
  };
}

const known = (draft: Draft, id: string): boolean =>
  draft.pending.some((entry) => entry.id === id) ||
  draft.decided.some((entry) => entry.requestId === id);

/** The gateway's requests into pending (bounded: more wait no longer than it takes to say so). */
function recordRequests(draft: Draft): string[] {
  const removed: string[] = [];
  for (const entry of requestAnnotations(draft.run)) {
    removed.push(entry.annotation);
    if ('error' in entry) {
      draft.problem = { reason: 'InvalidInboxRequest', message: entry.error };
      continue;
    }
    const { request } = entry;
    if (known(draft, request.id)) continue;
    const pending: InboxPending = { ...request };
    if (attemptOver(draft.run, request)) {
      draft.pending.push(pending);
      settle(draft, pending, { verdict: 'timeout', via: 'timeout' }, null);
      continue;
    }
    if (draft.pending.length >= INBOX_LIMITS.pending) {
      draft.pending.push(pending);
      const reason = `more than ${INBOX_LIMITS.pending} requests waited at once`;
      settle(draft, pending, { verdict: 'timeout', via: 'timeout', reason }, null);
      continue;
    }
    draft.pending.push(pending);
    const what = request.kind === 'question' ? 'question' : 'permission request';
    const rule = request.rule === undefined ? 'the default' : `rule ${request.rule}`;
    const text = `${what} ${request.id} (slot ${request.slot}, attempt ${request.attempt}, ${rule}) waits for a person until ${request.deadline}: ${request.title}`;
    const reason =
      request.kind === 'question' ? InboxReasons.QuestionAsked : InboxReasons.ApprovalRequested;
    draft.events.push(inboxEvent(draft.run, reason, `${request.id}-requested`, text));
  }
  return removed;
}

/** A decision in spec.decisions counts for a request still pending, as its kind takes it. */
function applySpecDecisions(draft: Draft, decisions: readonly SpecDecision[]): void {
  for (const entry of decisions) {
    const request = draft.pending.find((each) => each.id === entry.requestId);
    if (!request) continue;
    const fits =
      request.kind === 'question'
        ? entry.verdict === 'answer' || entry.verdict === 'deny'
        : entry.verdict !== 'answer';
    if (!fits) {
      draft.problem = {
        reason: 'InvalidDecision',
        message: `spec.decisions: ${entry.verdict} does not answer ${request.kind} ${request.id}`,
      };
      continue;
    }
    const decision = {
      verdict: entry.verdict,
      via: 'kubernetes' as const,
      ...(entry.by === undefined ? {} : { by: entry.by }),
      ...(entry.reason === undefined ? {} : { reason: entry.reason }),
      ...(entry.answer === undefined ? {} : { answer: entry.answer }),
    };
    settle(draft, request, decision, 'decided_in_kubernetes');
  }
}

/**
 * A request of an attempt that is over (the run ended, the slot retried) has nobody waiting:
 * it ends as a timeout with no word on the issue. Steers no slot took get one reply then.
 */
function endWithAttempts(draft: Draft): void {
  for (const request of [...draft.pending]) {
    if (attemptOver(draft.run, request)) {
      settle(
        draft,
        request,
        // Said in its Event: nobody let it time out, its attempt ended first.
        { verdict: 'timeout', via: 'timeout', reason: 'its attempt ended before an answer came' },
        null,
      );
    }
  }
  if (!runFinished(draft.run)) return;
  const mark = steeredMark(draft.run);
  const undelivered = draft.steers.filter((steer) => steer.seq > mark);
  const last = undelivered.at(-1);
  if (!last) return;
  const note = `undelivered:${last.seq}`;
  if (draft.handled.includes(note)) return;
  draft.handled.push(note);
  const by = [...new Set(undelivered.flatMap((steer) => (steer.by ? [steer.by] : [])))];
  reply(draft, note, 'steer_undelivered', by.length > 0 ? { by: by.join(', ') } : {});
}

/**
 * Each pending request not yet on the issue is posted; one the tracker refused is tried again
 * on the looks that read the issue (every poll interval), not on every change of the run.
 */
function askPending(draft: Draft, reading: boolean): void {
  for (const request of draft.pending) {
    if (request.commentId !== undefined) continue;
    if (request.commentError !== undefined && !reading) continue;
    draft.posts.push({
      key: `request:${request.id}`,
      kind: 'request',
      requestId: request.id,
      body: requestCommentText(request, {
        run: draft.run.metadata.name ?? '',
        approvers: draft.config.approvers,
        onTimeout: draft.config.onTimeout,
      }),
    });
  }
}

function stopNote(draft: Draft): string {
  const who = draft.stoppedBy ? ` by ${draft.stoppedBy}` : '';
  return `/stop${who} on ${draft.run.spec.issue.identifier}`;
}
