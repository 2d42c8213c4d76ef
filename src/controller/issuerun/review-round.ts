import { ReviewReasons, type IssueRunStatus } from '../../api/index.js';
import type { RetryPlan } from './retry.js';

/** The attempt a due review round runs as: the one its slots start next. */
export const roundAttempt = (plan: RetryPlan): number => Math.max(0, ...plan.due.keys());

/**
 * The status with review round `round` started as `attempt` (docs/review-loop.md): written
 * before the attempt's Pods, so a restart in between starts that attempt, not another round.
 * Null when it is recorded already.
 */
export function startRound(
  status: IssueRunStatus,
  round: number,
  attempt: number,
): IssueRunStatus | null {
  const review = status.review ?? {};
  if (review.round === round && review.roundAttempt === attempt) return null;
  return {
    ...status,
    review: {
      ...review,
      phase: 'Open',
      round,
      roundAttempt: attempt,
      reason: ReviewReasons.ReviewRoundScheduled,
      message: `review round ${round} runs as attempt ${attempt}`,
    },
  };
}
