import {
  INBOX_LIMITS,
  InboxReasons,
  rfc3339,
  type InboxDecision,
  type InboxPending,
} from '../../api/index.js';
import type { TrackerComment } from '../../tracker/types.js';
import { authorOf, isApprover } from './approvers.js';
import { answerText, isInboxComment, parseInboxCommands, type InboxCommand } from './commands.js';
import {
  handle,
  isHandled,
  reply,
  replyKindOf,
  settle,
  timeOut,
  type Draft,
  type ReplyData,
} from './draft.js';
import type { ReplyKind } from './comment-text.js';
import { inboxEvent, nameDigest } from './events.js';
import { runFinished, timeOf } from './requests.js';
import { authorKey, selfAuthors } from './self-authors.js';

/**
 * The comments, read for the inbox (docs/approvals.md): `/approve`, `/deny`, a reply
 * that answers a question, `/steer` and `/stop`. Oldest first, so the first decision by time
 * wins; each comment acted upon or answered is remembered (status.inbox.handledComments), so
 * an edited or deleted comment changes nothing later. Comments written before the run
 * started never count, nor those before a request was asked for that request.
 */

interface Seen {
  draft: Draft;
  comment: TrackerComment;
  /** When it was written (ms); a comment without a time counts as written now. */
  at: number;
  approver: boolean;
  author: string;
}

const numeric = (id: string): boolean => /^\d+$/.test(id);

function byId(a: string, b: string): number {
  if (numeric(a) && numeric(b)) return BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Oldest first by created_at, those without one last, then by id. */
export function commentOrder(comments: readonly TrackerComment[]): TrackerComment[] {
  const when = (comment: TrackerComment) => timeOf(comment.created_at, Infinity);
  return [...comments].sort((a, b) => {
    const [x, y] = [when(a), when(b)];
    if (x !== y) return x === Infinity ? 1 : y === Infinity ? -1 : x - y;
    return byId(a.id, b.id);
  });
}

export function readComments(
  draft: Draft,
  comments: readonly TrackerComment[],
  self: readonly string[] = [],
): void {
  const now = draft.now.getTime();
  const lorenz = selfAuthors(comments, self);
  const created = draft.run.metadata.creationTimestamp;
  const started =
    draft.run.status?.startTime ?? (created instanceof Date ? created.toISOString() : created);
  const floor = timeOf(started, -Infinity);
  for (const raw of commentOrder(comments)) {
    // Its id is kept in the status, whose schema bounds it.
    const comment = { ...raw, id: raw.id.slice(0, 256) };
    if (isInboxComment(comment.body) || isHandled(draft, comment.id)) continue;
    if (lorenz.has(authorKey(comment) ?? '')) continue;
    const at = timeOf(comment.created_at, now);
    if (at < floor) continue;
    // A request whose deadline passed before this comment was written had timed out by then.
    timeOut(draft, at, true);
    const seen: Seen = {
      draft,
      comment,
      at,
      approver: isApprover(draft.config.approvers, comment),
      author: authorOf(comment).slice(0, 256),
    };
    if (readComment(seen)) handle(draft, comment.id);
  }
}

/** Whether the comment was acted upon or answered. */
function readComment(seen: Seen): boolean {
  const commands = parseInboxCommands(seen.comment.body);
  if (commands.length === 0) return plainReply(seen);
  let acted = false;
  commands.forEach((command, index) => {
    acted = runCommand(seen, command, index) || acted;
  });
  return acted;
}

function runCommand(seen: Seen, command: InboxCommand, index: number): boolean {
  switch (command.kind) {
    case 'approve':
    case 'deny':
      return decideCommand(seen, command, index);
    case 'steer':
      return steerCommand(seen, command, index);
    case 'stop':
      return stopCommand(seen, index);
  }
}

/**
 * Whether a comment written at `at` came after the request: after it was asked (the Pod's
 * clock) or after it was posted (the controller's), so a Pod clock ahead loses no reply.
 */
const asked = (request: InboxPending, at: number): boolean =>
  Math.min(timeOf(request.askedAt, -Infinity), timeOf(request.commentedAt, Infinity)) <= at;

/** A plain reply answers the oldest question waiting since before it was written. */
function plainReply(seen: Seen): boolean {
  const { draft, comment } = seen;
  const question = draft.pending.find(
    (request) => request.kind === 'question' && asked(request, seen.at),
  );
  if (!question) return false;
  if (!seen.approver) return notice(seen, question);
  const answer = answerText(comment.body);
  if (answer === '') return false;
  const decision = { verdict: 'answer' as const, answer, by: seen.author, via: 'comment' as const };
  settle(draft, question, { ...decision, commentId: comment.id }, 'answered', { by: seen.author });
  return true;
}

type Target =
  | { kind: 'pending'; request: InboxPending }
  | { kind: 'decided'; decision: InboxDecision }
  | { kind: 'none' };

/**
 * The request a decision command is for: the one it names, else the oldest permission request
 * waiting (a /deny also declines the oldest question when no permission request waits).
 */
function targetOf(
  draft: Draft,
  command: InboxCommand & { requestId: string | null },
  at: number,
): Target {
  const waiting = draft.pending.filter((request) => asked(request, at));
  const named = command.requestId;
  if (named !== null) {
    const request = waiting.find((each) => each.id === named);
    if (request) return { kind: 'pending', request };
    const decision = draft.decided.find((each) => each.requestId === named);
    return decision ? { kind: 'decided', decision } : { kind: 'none' };
  }
  const request =
    waiting.find((each) => each.kind === 'permission') ??
    (command.kind === 'deny' ? waiting.find((each) => each.kind === 'question') : undefined);
  if (request) return { kind: 'pending', request };
  // Nothing waits: it came after another decision (first by time wins), or there was none.
  const decision = draft.decided.at(-1);
  return decision ? { kind: 'decided', decision } : { kind: 'none' };
}

function ignored(seen: Seen, index: number, why: string, kind: ReplyKind, data: ReplyData) {
  const { draft, comment } = seen;
  reply(draft, `comment:${comment.id}:${index}`, kind, data);
  const text = `a comment by ${seen.author} was not acted on: ${why}`;
  draft.events.push(
    inboxEvent(draft.run, InboxReasons.ReplyIgnored, `ignored-${nameDigest(comment.id)}`, text),
  );
}

function decideCommand(
  seen: Seen,
  command: Extract<InboxCommand, { kind: 'approve' | 'deny' }>,
  index: number,
): boolean {
  const { draft, comment } = seen;
  const target = targetOf(draft, command, seen.at);
  if (!seen.approver) return notice(seen, target.kind === 'pending' ? target.request : null);
  const requestId = command.requestId ?? undefined;
  const by = seen.author;
  if (target.kind === 'decided') {
    const decidedBy = target.decision.by ?? target.decision.via;
    const data = { requestId: target.decision.requestId, by, decidedBy };
    ignored(
      seen,
      index,
      `request ${target.decision.requestId} was already decided`,
      'already_decided',
      data,
    );
    return true;
  }
  const request = target.kind === 'pending' ? target.request : null;
  if (!request || (command.kind === 'approve' && request.kind === 'question')) {
    const data = requestId === undefined ? { by } : { requestId, by };
    ignored(seen, index, 'no request waits for it', 'no_request', data);
    return true;
  }
  const verdict = command.kind === 'deny' ? 'deny' : command.always ? 'approve_always' : 'approve';
  const reason =
    command.kind === 'deny' && command.reason
      ? { reason: command.reason.slice(0, INBOX_LIMITS.reasonLength) }
      : {};
  const decision = {
    verdict,
    by,
    via: 'comment' as const,
    commentId: comment.id,
    ...reason,
  } as const;
  settle(draft, request, decision, replyKindOf(verdict), { by });
  return true;
}

function steerCommand(
  seen: Seen,
  command: Extract<InboxCommand, { kind: 'steer' }>,
  index: number,
): boolean {
  const { draft, comment } = seen;
  if (!seen.approver) return notice(seen, null);
  if (!draft.config.steering) {
    reply(draft, `comment:${comment.id}:${index}`, 'steering_off', { by: seen.author });
    return true;
  }
  // A steer waits for the run to run (it is read again then); an empty one is dropped.
  if (draft.run.status?.phase !== 'Running') return false;
  const text = command.text.trim().slice(0, INBOX_LIMITS.steerLength);
  if (text === '') return true;
  draft.steerSeq += 1;
  const seq = draft.steerSeq;
  draft.steers.push({ seq, text, by: seen.author, commentId: comment.id, at: rfc3339(draft.now) });
  reply(draft, `comment:${comment.id}:${index}`, 'steer_received', { by: seen.author });
  const note = `steer ${seq} from ${seen.author}: the agent takes it as its next turn`;
  draft.events.push(inboxEvent(draft.run, InboxReasons.SteerReceived, `steer-${seq}`, note));
  return true;
}

function stopCommand(seen: Seen, index: number): boolean {
  const { draft, comment } = seen;
  if (!seen.approver) return notice(seen, null);
  if (draft.stopRequested || draft.run.spec.cancelRequested === true || runFinished(draft.run)) {
    return true;
  }
  draft.stopRequested = true;
  draft.stoppedBy = seen.author;
  reply(draft, `comment:${comment.id}:${index}`, 'stopped', { by: seen.author });
  const note = `/stop by ${seen.author}: the run is cancelled`;
  draft.events.push(inboxEvent(draft.run, InboxReasons.StopRequested, 'stop', note));
  return true;
}

/**
 * A comment by someone who is not an approver changes nothing; they are told so once per
 * request (pending.noticed), or once at all for a steer or stop (a note in handledComments).
 */
function notice(seen: Seen, request: InboxPending | null): boolean {
  const { draft } = seen;
  const who = seen.author.trim().toLowerCase();
  if (request) {
    const noticed = request.noticed ?? [];
    if (noticed.includes(who)) return false;
    request.noticed = [...noticed, who].slice(-INBOX_LIMITS.noticed);
  } else {
    const note = `author:${who}`;
    if (isHandled(draft, note)) return false;
    handle(draft, note);
  }
  const data = request ? { requestId: request.id, by: seen.author } : { by: seen.author };
  ignored(seen, 0, 'not one of agent.approvals.approvers', 'not_approver', data);
  return true;
}
