import { z } from 'zod';

/**
 * The review loop's part of the API (docs/review-loop.md): the pull request a run's branch
 * became, where its review stands, and the Workflow's code host credentials. Written by the
 * review controller only; the IssueRun reconciler carries them over untouched.
 */

/** Why the review loop stands where it does (status.review.reason). */
export const ReviewReasons = {
  /** The pull request was opened (or found open) for the run's branch. */
  PullRequestOpened: 'PullRequestOpened',
  /** The run's attempt ended; it waits for reviews, comments and checks on its PR. */
  AwaitingReview: 'AwaitingReview',
  /** Feedback came in: the next attempt (a review round) starts on the same branch. */
  ReviewRoundScheduled: 'ReviewRoundScheduled',
  Approved: 'Approved',
  Merged: 'Merged',
  PullRequestClosed: 'PullRequestClosed',
  /** Feedback came in after review.max_rounds rounds: the loop stops. */
  MaxRoundsReached: 'MaxRoundsReached',
  /** The branch is not ahead of the default branch on the remote: no PR to open. */
  NothingToReview: 'NothingToReview',
  /** The code host could not be reached or refused; tried again with a backoff. */
  CodeHostUnavailable: 'CodeHostUnavailable',
  /** The tracker refused the link comment or a state move; tried again with a backoff. */
  TrackerUnavailable: 'TrackerUnavailable',
} as const;

export type ReviewReason = (typeof ReviewReasons)[keyof typeof ReviewReasons];

/** The phases after which the loop looks no more: the run ends. */
export const FINAL_REVIEW_PHASES = [
  'Approved',
  'Merged',
  'PullRequestClosed',
  'MaxRoundsReached',
  'NothingToReview',
] as const;

export const reviewPhaseSchema = z.enum(['Open', 'RoundScheduled', ...FINAL_REVIEW_PHASES]);
export type ReviewPhase = z.infer<typeof reviewPhaseSchema>;

export const isFinalReviewPhase = (phase: string | undefined): boolean =>
  (FINAL_REVIEW_PHASES as readonly string[]).includes(phase ?? '');

export const pullRequestStatusSchema = z
  .object({
    number: z.int().min(0).describe('The pull request number (GitLab: the merge request iid).'),
    url: z.string().max(2048).describe('Link to the pull request.'),
    state: z.enum(['open', 'closed', 'merged']).describe('open, closed or merged.'),
    headSha: z.string().max(128).optional().describe('The head commit last seen.'),
    draft: z.boolean().optional().describe('Whether it is a draft.'),
  })
  .describe('The pull (merge) request opened for the run branch.');

export const reviewStatusSchema = z
  .object({
    phase: reviewPhaseSchema
      .optional()
      .describe(
        'Open (waiting for feedback), RoundScheduled, or a final one: Approved, Merged, PullRequestClosed, MaxRoundsReached, NothingToReview.',
      ),
    round: z.int().min(0).optional().describe('Review rounds started.'),
    requestedRound: z
      .int()
      .min(0)
      .optional()
      .describe('The round the review controller asked for; it starts when above round.'),
    roundAttempt: z
      .int()
      .min(0)
      .optional()
      .describe('The attempt the latest round runs as (recorded before its Pod is made).'),
    reason: z.string().optional().describe('CamelCase reason (ReviewReasons).'),
    message: z.string().optional().describe('Human-readable detail.'),
    lastCheckTime: z
      .string()
      .meta({ format: 'date-time' })
      .optional()
      .describe('When the pull request was last read back.'),
    cursor: z
      .object({
        lastCommentId: z.string().max(128).optional().describe('The newest comment seen.'),
        lastReviewId: z.string().max(128).optional().describe('The newest review seen.'),
        failedChecksSha: z
          .string()
          .max(128)
          .optional()
          .describe('The head commit whose failed checks already started a round.'),
      })
      .optional()
      .describe('What feedback was already acted on.'),
    linkCommented: z
      .boolean()
      .optional()
      .describe('Whether the tracker got its one comment with the pull request link.'),
  })
  .describe('Where the review loop of the run stands (docs/review-loop.md).');

/** A reference to one key of a Secret in the Workflow's namespace; `keyDescription` says its default. */
export function secretKeyRefSchema(keyDescription: string) {
  return z.object({
    name: z.string().min(1).max(253).describe('A Secret in this namespace.'),
    key: z.string().min(1).max(253).optional().describe(keyDescription),
  });
}

export const workflowReviewSchema = z
  .object({
    credentialsSecretRef: secretKeyRefSchema(
      'The key holding the code host token; default `token`.',
    )
      .optional()
      .describe(
        "The code host token of the review loop, read by the controller only (never put in a run Pod). Without it, the git credentials Secret's entry for the host is used.",
      ),
  })
  .describe(
    'The review loop (`review:` in WORKFLOW.md): how the controller reaches the code host.',
  );

export type PullRequestStatus = z.infer<typeof pullRequestStatusSchema>;
export type ReviewStatus = z.infer<typeof reviewStatusSchema>;
export type WorkflowReview = z.infer<typeof workflowReviewSchema>;
