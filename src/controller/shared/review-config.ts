import type { IssueRun } from '../../api/index.js';
import { isFinalReviewPhase } from '../../api/index.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import type { ReviewConfig } from '../../workflow/review-config.js';

/**
 * The Workflow's `review:` section, read in one place: null unless the loop is on. The
 * loop needs a git workspace (a branch to open the pull request from), so a Workflow
 * without workspace.git has none whatever its `review:` says.
 */
export function reviewConfigOf(config: WorkflowConfig): ReviewConfig | null {
  return config.review && config.workspace.git ? config.review : null;
}

/** The reason a slot shows while its run waits for the review of its pull request. */
export const AWAITING_REVIEW = 'AwaitingReview' as const;

/**
 * Whether the run's attempts are done for now and it waits for the review of its pull
 * request: the only runs the review controller looks at (feedback that comes in while an
 * attempt runs waits for it to end).
 */
export function awaitingReview(run: IssueRun): boolean {
  if (run.spec.cancelRequested || isFinalReviewPhase(run.status?.review?.phase)) return false;
  const phase = run.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const slots = run.status?.slots ?? [];
  return slots.length > 0 && slots.every((slot) => slot.reason === AWAITING_REVIEW);
}
