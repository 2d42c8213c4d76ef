import { Reasons, isFinalReviewPhase, rfc3339, type IssueRun } from '../../api/index.js';
import { exponentialDelay } from '../runtime/backoff.js';
import { BudgetReasons } from '../../api/budget.js';
import { AWAITING_REVIEW } from '../shared/review-config.js';
import type { PodOutcome } from './pod-status.js';
import type { SlotView } from './status.js';

/**
 * The retry policy of an IssueRun's slots (docs/design.md#retries-and-continuation): a slot whose
 * attempt failed is tried again as a new Pod `<run>-<slot>-<attempt+1>` after `min(10 s ·
 * 2^(attempt−1), agent.max_retry_backoff_ms)`, while spec.retries allows. The schedule lives in
 * status.slots[], so a restarted controller keeps it. Pure: the reconciler does the I/O.
 */

export const RETRY_BASE_MS = 10_000;

/** The wait before the attempt after `attempt` (1-based, counted from the run's first). */
export function retryBackoffMs(attempt: number, capMs: number): number {
  return exponentialDelay(attempt - 1, RETRY_BASE_MS, capMs);
}

/** The number of the run's first attempt. */
export const firstAttempt = (run: IssueRun): number => run.spec.attempt ?? 1;

/** The attempt a slot is on, as its status records it (the first until a retry starts). */
export function slotAttempt(run: IssueRun, slot: number): number {
  return run.status?.slots?.find((entry) => entry.slot === slot)?.attempt ?? firstAttempt(run);
}

/** After a clean finish with the issue still active, the next attempt starts this soon. */
export const CONTINUATION_DELAY_MS = 1000;

/**
 * Why a slot gets another attempt: its attempt failed, it succeeded with work left, or it
 * succeeded and waits for the review of its pull request (a round may follow).
 */
export type NextAttempt = 'retry' | 'continuation' | 'review';

/**
 * Whether an ended attempt is followed by another. A failure is retried while spec.retries
 * allows; a run that continues while its issue is active (spec.continueWhileActive, set for
 * the tracker's issues) retries every failure and continues after every success as long as
 * `issueActive`. A success with no continuation on a run under review (`reviewing`: its
 * Workflow has `review:` and workspace.git) waits for the review until the loop's phase is
 * final (docs/review-loop.md). Nothing follows a cancellation, nor a budget crossed.
 */
export function nextAttempt(
  run: IssueRun,
  outcome: PodOutcome | null,
  attempt: number,
  issueActive = false,
  reviewing = false,
): NextAttempt | null {
  if (!outcome?.finished || run.spec.cancelRequested) return null;
  const continues = run.spec.continueWhileActive === true && issueActive;
  if (outcome.phase === 'Succeeded') {
    if (continues) return 'continuation';
    return reviewing && !isFinalReviewPhase(run.status?.review?.phase) ? 'review' : null;
  }
  if (outcome.phase !== 'Failed' || outcome.reason === Reasons.Cancelled) return null;
  // A spent budget is not spent less by trying again (docs/budgets.md): the run ends there.
  if (outcome.reason === BudgetReasons.BudgetExceeded) return null;
  return continues || attempt - firstAttempt(run) < (run.spec.retries ?? 0) ? 'retry' : null;
}

/**
 * The review round a slot that waits for review starts now, or null while it waits: the
 * review controller asked for a round the run has not started (requestedRound > round), or
 * the round was started (status.review.roundAttempt) but its attempt's Pod was never made.
 */
export function reviewRoundDue(run: IssueRun, attempt: number): number | null {
  const review = run.status?.review;
  const round = review?.round ?? 0;
  if ((review?.requestedRound ?? 0) > round) return review?.requestedRound ?? null;
  return round > 0 && (review?.roundAttempt ?? 0) > attempt ? round : null;
}

/** The outcome a slot shows while it waits for the review of its pull request. */
export function awaitingReviewOutcome(run: IssueRun, attempt: number): PodOutcome {
  const pull = run.status?.git?.pullRequest;
  const where = pull ? `pull request ${pull.url}` : 'its pull request';
  return {
    phase: 'Pending',
    reason: AWAITING_REVIEW,
    message: `attempt ${attempt} succeeded; waiting for the review of ${where}`,
    finished: false,
    summary: null,
  };
}

/** Whether a failed attempt may be tried again (nextAttempt says 'retry'). */
export const retryable = (run: IssueRun, outcome: PodOutcome | null, attempt: number): boolean =>
  nextAttempt(run, outcome, attempt) === 'retry';

export type RetryDecision = { kind: 'wait'; until: Date } | { kind: 'start'; attempt: number };

/**
 * When a slot's next attempt starts: at the time its status already holds, else the delay
 * from now (the moment the end was seen): the backoff after a failure, 1 s after a success.
 */
export function decideRetry(options: {
  attempt: number;
  first: number;
  nextAttemptTime: string | undefined;
  capMs: number;
  now: Date;
  kind?: NextAttempt;
}): RetryDecision {
  const planned = options.nextAttemptTime ? Date.parse(options.nextAttemptTime) : Number.NaN;
  const delay =
    options.kind === 'continuation'
      ? CONTINUATION_DELAY_MS
      : retryBackoffMs(options.attempt - options.first + 1, options.capMs);
  const until = Number.isFinite(planned) ? planned : options.now.getTime() + delay;
  return until <= options.now.getTime()
    ? { kind: 'start', attempt: options.attempt + 1 }
    : { kind: 'wait', until: new Date(until) };
}

/** The outcome a slot shows while it waits for its next attempt: why, and when it starts. */
export function waitingOutcome(
  ended: PodOutcome,
  attempt: number,
  until: Date,
  kind: NextAttempt = 'retry',
): PodOutcome {
  const next = `attempt ${attempt + 1} starts at ${rfc3339(until)}`;
  return kind === 'continuation'
    ? {
        phase: 'Pending',
        reason: Reasons.ContinuationScheduled,
        message: `attempt ${attempt} succeeded and the issue is still active; ${next}`,
        finished: false,
        summary: null,
      }
    : {
        phase: 'Pending',
        reason: Reasons.RetryScheduled,
        message: `attempt ${attempt} failed (${ended.reason}: ${ended.message}); ${next}`,
        finished: false,
        summary: null,
      };
}

/** What the retry policy makes of a run's slot views. */
export interface RetryPlan {
  /** The views, those waiting to try again shown so (RetryScheduled, nextAttemptTime). */
  views: SlotView[];
  /** Slots whose next attempt is due now, by that attempt's number. */
  due: Map<number, number[]>;
  /** Slots that will try again: their records must all be in before anything moves. */
  retrying: SlotView[];
  /** The earliest time a waiting slot is due (ms since epoch). */
  wakeAt?: number;
  /** The review round the due attempts start, when a review asked for one. */
  reviewRound?: number;
}

/** Applies the retry policy to the views of a run's current attempts. Pure. */
export function planRetries(
  run: IssueRun,
  views: readonly SlotView[],
  capMs: number,
  now: Date,
  issueActive = false,
  reviewing = false,
): RetryPlan {
  const plan: RetryPlan = { views: [], due: new Map(), retrying: [] };
  for (const view of views) {
    const kind = nextAttempt(run, view.outcome, view.attempt, issueActive, reviewing);
    if (!view.outcome || kind === null) {
      plan.views.push(view);
      continue;
    }
    plan.retrying.push(view);
    if (kind === 'review') {
      // No timer: the review controller's status write (requestedRound) wakes the run.
      const round = reviewRoundDue(run, view.attempt);
      if (round === null) {
        plan.views.push({ ...view, outcome: awaitingReviewOutcome(run, view.attempt) });
        continue;
      }
      const next = view.attempt + 1;
      plan.due.set(next, [...(plan.due.get(next) ?? []), view.slot]);
      plan.reviewRound = round;
      plan.views.push(view);
      continue;
    }
    const recorded = run.status?.slots?.find((entry) => entry.slot === view.slot);
    const decision = decideRetry({
      attempt: view.attempt,
      first: firstAttempt(run),
      nextAttemptTime:
        recorded?.attempt === view.attempt ? recorded.nextAttemptTime : view.nextAttemptTime,
      capMs,
      now,
      kind,
    });
    if (decision.kind === 'start') {
      plan.due.set(decision.attempt, [...(plan.due.get(decision.attempt) ?? []), view.slot]);
      plan.views.push(view);
      continue;
    }
    plan.views.push({
      ...view,
      outcome: waitingOutcome(view.outcome, view.attempt, decision.until, kind),
      nextAttemptTime: rfc3339(decision.until),
    });
    plan.wakeAt = Math.min(plan.wakeAt ?? Infinity, decision.until.getTime());
  }
  return plan;
}
