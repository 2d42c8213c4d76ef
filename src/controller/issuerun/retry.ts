import { Reasons, rfc3339, type IssueRun } from '../../api/index.js';
import type { PodOutcome } from './pod-status.js';
import type { SlotView } from './status.js';

/**
 * The retry policy of an IssueRun's slots (facts.md, "Retry"): a slot whose attempt failed
 * is tried again as a new Pod `<run>-<slot>-<attempt+1>` after
 * `min(10 s · 2^(attempt−1), agent.max_retry_backoff_ms)`, while spec.retries allows. The
 * schedule lives in status.slots[], so a restarted controller keeps it. Pure: the reconciler
 * does the I/O.
 */

export const RETRY_BASE_MS = 10_000;

/** The wait before the attempt after `attempt` (1-based, counted from the run's first). */
export function retryBackoffMs(attempt: number, capMs: number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  return Math.min(RETRY_BASE_MS * 2 ** exponent, capMs);
}

/** The number of the run's first attempt. */
export const firstAttempt = (run: IssueRun): number => run.spec.attempt ?? 1;

/** The attempt a slot is on, as its status records it (the first until a retry starts). */
export function slotAttempt(run: IssueRun, slot: number): number {
  return run.status?.slots?.find((entry) => entry.slot === slot)?.attempt ?? firstAttempt(run);
}

/** Whether an ended attempt may be tried again: it failed, nobody cancelled it, retries remain. */
export function retryable(run: IssueRun, outcome: PodOutcome | null, attempt: number): boolean {
  if (!outcome?.finished || outcome.phase !== 'Failed') return false;
  if (outcome.reason === Reasons.Cancelled || run.spec.cancelRequested) return false;
  return attempt - firstAttempt(run) < (run.spec.retries ?? 0);
}

export type RetryDecision = { kind: 'wait'; until: Date } | { kind: 'start'; attempt: number };

/**
 * When a retryable slot's next attempt starts: at the time its status already holds, else
 * the backoff from now (the moment the failure was seen).
 */
export function decideRetry(options: {
  attempt: number;
  first: number;
  nextAttemptTime: string | undefined;
  capMs: number;
  now: Date;
}): RetryDecision {
  const planned = options.nextAttemptTime ? Date.parse(options.nextAttemptTime) : Number.NaN;
  const until = Number.isFinite(planned)
    ? planned
    : options.now.getTime() + retryBackoffMs(options.attempt - options.first + 1, options.capMs);
  return until <= options.now.getTime()
    ? { kind: 'start', attempt: options.attempt + 1 }
    : { kind: 'wait', until: new Date(until) };
}

/** The outcome a slot shows while it waits to try again: what failed, and when it retries. */
export function waitingOutcome(failed: PodOutcome, attempt: number, until: Date): PodOutcome {
  return {
    phase: 'Pending',
    reason: Reasons.RetryScheduled,
    message: `attempt ${attempt} failed (${failed.reason}: ${failed.message}); attempt ${attempt + 1} starts at ${rfc3339(until)}`,
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
}

/** Applies the retry policy to the views of a run's current attempts. Pure. */
export function planRetries(
  run: IssueRun,
  views: readonly SlotView[],
  capMs: number,
  now: Date,
): RetryPlan {
  const plan: RetryPlan = { views: [], due: new Map(), retrying: [] };
  for (const view of views) {
    if (!view.outcome || !retryable(run, view.outcome, view.attempt)) {
      plan.views.push(view);
      continue;
    }
    plan.retrying.push(view);
    const recorded = run.status?.slots?.find((entry) => entry.slot === view.slot);
    const decision = decideRetry({
      attempt: view.attempt,
      first: firstAttempt(run),
      nextAttemptTime:
        recorded?.attempt === view.attempt ? recorded.nextAttemptTime : view.nextAttemptTime,
      capMs,
      now,
    });
    if (decision.kind === 'start') {
      plan.due.set(decision.attempt, [...(plan.due.get(decision.attempt) ?? []), view.slot]);
      plan.views.push(view);
      continue;
    }
    plan.views.push({
      ...view,
      outcome: waitingOutcome(view.outcome, view.attempt, decision.until),
      nextAttemptTime: rfc3339(decision.until),
    });
    plan.wakeAt = Math.min(plan.wakeAt ?? Infinity, decision.until.getTime());
  }
  return plan;
}
