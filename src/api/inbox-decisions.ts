import { CodedError } from '../workflow/errors.js';
import {
  INBOX_LIMITS,
  inboxPendingSchema,
  specDecisionSchema,
  type InboxPending,
  type SpecDecision,
} from './inbox.js';

/**
 * A decision made in Kubernetes, as `lorenz approve` and the web view write it: pick the
 * request it answers from status.inbox.pending, check the verdict fits the request, and build
 * the merge patch of spec.decisions. Pure and shared, so the CLI and the server write the
 * same entry the same way. The patch carries the object's resourceVersion: a merge patch
 * replaces the whole list, and a writer racing another gets 409 and reads again instead of
 * dropping the other's decision.
 */

export type SpecVerdict = SpecDecision['verdict'];

export type InboxDecisionErrorCode =
  /** Nothing waits: there is nothing to answer. */
  | 'no_pending_request'
  /** --request names a request that does not wait (never did, or was decided). */
  | 'request_not_found'
  /** A question takes an answer (or a denial), a permission request an approval or a denial. */
  | 'verdict_mismatch'
  /** spec.decisions already answers that request; the controller has not taken it yet. */
  | 'already_decided'
  /** The entry breaks spec.decisions' schema (a reason or answer too long, say). */
  | 'invalid_decision';

export class InboxDecisionError extends CodedError<InboxDecisionErrorCode> {
  constructor(code: InboxDecisionErrorCode, message: string) {
    super('InboxDecisionError', code, message);
  }
}

export interface DecisionInput {
  /** The request to answer; unset: the only one waiting, else the oldest. */
  requestId?: string | undefined;
  verdict: SpecVerdict;
  reason?: string | undefined;
  answer?: string | undefined;
  by?: string | undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const at = (value: unknown, ...keys: string[]): unknown =>
  keys.reduce<unknown>((current, key) => (isObject(current) ? current[key] : undefined), value);

/** The requests waiting in an IssueRun (raw JSON), oldest first; malformed ones are skipped. */
export function pendingRequests(run: unknown): InboxPending[] {
  const list = at(run, 'status', 'inbox', 'pending');
  if (!Array.isArray(list)) return [];
  return list
    .flatMap((each) => {
      const parsed = inboxPendingSchema.safeParse(each);
      return parsed.success ? [parsed.data] : [];
    })
    .sort((a, b) => a.askedAt.localeCompare(b.askedAt) || a.id.localeCompare(b.id));
}

/** The entries of spec.decisions as they are (the apiserver's schema checked them). */
export function specDecisions(run: unknown): unknown[] {
  const list = at(run, 'spec', 'decisions');
  return Array.isArray(list) ? list : [];
}

/** The request a decision answers: the one named, else the only or oldest one waiting. */
export function pickRequest(pending: readonly InboxPending[], requestId?: string): InboxPending {
  if (pending.length === 0)
    throw new InboxDecisionError('no_pending_request', 'no request is waiting for an answer');
  if (requestId === undefined) return pending[0]!;
  const found = pending.find((request) => request.id === requestId);
  if (!found)
    throw new InboxDecisionError(
      'request_not_found',
      `no request ${requestId} is waiting (waiting: ${pending.map((r) => r.id).join(', ')})`,
    );
  return found;
}

/** The spec.decisions entry for `request`, checked against its kind and the schema. */
export function decisionEntry(request: InboxPending, input: DecisionInput): SpecDecision {
  const question = request.kind === 'question';
  if (question && (input.verdict === 'approve' || input.verdict === 'approve_always'))
    throw new InboxDecisionError(
      'verdict_mismatch',
      `request ${request.id} is a question: give an answer, or deny it`,
    );
  if (!question && input.verdict === 'answer')
    throw new InboxDecisionError(
      'verdict_mismatch',
      `request ${request.id} is a permission request: approve or deny it, it takes no answer`,
    );
  if (input.verdict === 'answer' && !input.answer)
    throw new InboxDecisionError('verdict_mismatch', `request ${request.id}: the answer is empty`);
  const entry = {
    requestId: request.id,
    verdict: input.verdict,
    ...(input.verdict === 'deny' && input.reason ? { reason: input.reason } : {}),
    ...(input.verdict === 'answer' ? { answer: input.answer } : {}),
    ...(input.by ? { by: input.by.slice(0, 256) } : {}),
  };
  const parsed = specDecisionSchema.safeParse(entry);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InboxDecisionError(
      'invalid_decision',
      `spec.decisions entry: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` +
        ` (a reason holds at most ${INBOX_LIMITS.reasonLength} characters, an answer ${INBOX_LIMITS.answerLength})`,
    );
  }
  return parsed.data;
}

/** The list with `entry` appended, bounded to INBOX_LIMITS.specDecisions by dropping the oldest. */
export function boundedDecisions(existing: readonly unknown[], entry: SpecDecision): unknown[] {
  return [...existing, entry].slice(-INBOX_LIMITS.specDecisions);
}

export interface DecisionPlan {
  request: InboxPending;
  entry: SpecDecision;
  /** A JSON merge patch for the IssueRun, with its resourceVersion for optimistic locking. */
  patch: { metadata?: { resourceVersion: string }; spec: { decisions: unknown[] } };
}

/**
 * What to write for `input` on `run` (the IssueRun as read); throws InboxDecisionError.
 * Without a request id, the oldest request spec.decisions does not answer yet is picked, so
 * a second `lorenz approve` in a row answers the next request, not the same one again.
 */
export function planDecision(run: unknown, input: DecisionInput): DecisionPlan {
  const existing = specDecisions(run);
  const answered = new Set(existing.map((each) => at(each, 'requestId')));
  const pending = pendingRequests(run);
  const open = pending.filter((each) => !answered.has(each.id));
  if (input.requestId === undefined && pending.length > 0 && open.length === 0)
    throw new InboxDecisionError(
      'already_decided',
      `every waiting request is answered in spec.decisions already (${pending.map((r) => r.id).join(', ')}); the controller has not taken them yet`,
    );
  const request = pickRequest(input.requestId === undefined ? open : pending, input.requestId);
  if (answered.has(request.id))
    throw new InboxDecisionError(
      'already_decided',
      `request ${request.id} is answered in spec.decisions already; the controller has not taken it yet`,
    );
  const entry = decisionEntry(request, input);
  const resourceVersion = at(run, 'metadata', 'resourceVersion');
  return {
    request,
    entry,
    patch: {
      ...(typeof resourceVersion === 'string' && resourceVersion
        ? { metadata: { resourceVersion } }
        : {}),
      spec: { decisions: boundedDecisions(existing, entry) },
    },
  };
}

/** How many times a writer reads again after a 409 before it gives up. */
export const DECISION_WRITE_ATTEMPTS = 3;
