import type { ReviewStatus } from '../../api/index.js';
import type {
  BranchComparison,
  CheckResult,
  PullRequest,
  PullRequestFeedback,
  ReviewComment,
} from '../../codehost/types.js';
import type { ReviewPromptContext } from '../../template/review-context.js';
import type { ReviewConfig } from '../../workflow/review-config.js';

/**
 * What the review controller does about one run awaiting review (docs/review-loop.md),
 * decided from what the code host said. Pure: the reconciler reads, this decides, the
 * reconciler writes.
 */

/** Before a pull request is known: open one (or find the open one), or there is nothing. */
export function decideOpening(comparison: BranchComparison | null): 'open' | 'nothing' {
  return comparison === null || comparison.aheadBy <= 0 ? 'nothing' : 'open';
}

export type Cursor = NonNullable<ReviewStatus['cursor']>;

export type ReviewDecision =
  /** Merged: the issue moves to `moveTo` (null: it stays), the loop ends. */
  | { kind: 'merged'; moveTo: string | null }
  | { kind: 'closed' }
  /** Feedback: round `round` starts with this context. */
  | { kind: 'round'; round: number; context: ReviewPromptContext; cursor: Cursor }
  /** Feedback after the last round the config allows: the loop stops. */
  | { kind: 'max-rounds'; cursor: Cursor; message: string }
  /** Approved with the required checks green: the issue moves to `moveTo` (null: stays). */
  | { kind: 'approved'; moveTo: string | null }
  /** Nothing to act on yet; a draft whose issue left the active states is marked ready. */
  | { kind: 'wait'; markReady: boolean; cursor: Cursor; message: string };

export interface ReviewInputs {
  config: ReviewConfig;
  pull: PullRequest;
  feedback: PullRequestFeedback;
  checks: readonly CheckResult[];
  /** The login the token acts as: its comments and reviews never start a round. */
  identity: string | null;
  review: ReviewStatus | undefined;
  issue: { active: boolean; terminal: boolean };
}

/** Conclusions of a completed check that count as a failure. */
const FAILED = new Set(['failure', 'timed_out', 'cancelled', 'action_required', 'startup_failure']);
/** Conclusions that let a pull request through. */
const PASSED = new Set(['success', 'neutral', 'skipped']);

/** Ids the hosts give are integers (as text): compared as numbers, else as text. */
export function idAfter(id: string, cursor: string | undefined): boolean {
  if (cursor === undefined || cursor === '') return true;
  if (/^\d+$/.test(id) && /^\d+$/.test(cursor)) return BigInt(id) > BigInt(cursor);
  return id > cursor;
}

const newest = (ids: readonly string[], cursor: string | undefined): string | undefined =>
  ids.reduce<string | undefined>((best, id) => (idAfter(id, best) ? id : best), cursor);

const same = (a: string | null, b: string | null): boolean =>
  a !== null && b !== null && a.toLowerCase() === b.toLowerCase();

/** The checks that count: the required ones, or every check when none is named. */
export function countedChecks(
  checks: readonly CheckResult[],
  required: readonly string[],
): CheckResult[] {
  return required.length === 0 ? [...checks] : checks.filter((c) => required.includes(c.name));
}

export const failedChecks = (checks: readonly CheckResult[]): CheckResult[] =>
  checks.filter((c) => c.status === 'completed' && FAILED.has(c.conclusion ?? ''));

/** Every required check succeeded (each named one is there); with none named, all that ran. */
export function checksGreen(checks: readonly CheckResult[], required: readonly string[]): boolean {
  const counted = countedChecks(checks, required);
  const passed = (c: CheckResult) => c.status === 'completed' && PASSED.has(c.conclusion ?? '');
  if (required.length > 0 && !required.every((name) => counted.some((c) => c.name === name))) {
    return false;
  }
  return counted.every(passed);
}

// eslint-disable-next-line max-lines-per-function -- one ladder, in the order the loop reads it
export function decideReview(inputs: ReviewInputs): ReviewDecision {
  const { config, pull, feedback, identity, review } = inputs;
  if (pull.state === 'merged') {
    return { kind: 'merged', moveTo: inputs.issue.terminal ? null : config.onMerged };
  }
  if (pull.state === 'closed') return { kind: 'closed' };
  const cursor = review?.cursor ?? {};
  const theirs = <T extends { author: string | null }>(items: readonly T[]) =>
    items.filter((item) => !same(item.author, identity));
  const comments = theirs(feedback.comments).filter((c) => idAfter(c.id, cursor.lastCommentId));
  const reviews = theirs(feedback.reviews).filter((r) => idAfter(r.id, cursor.lastReviewId));
  const changes = reviews.filter((r) => r.state === 'changes_requested');
  const counted = countedChecks(inputs.checks, config.requiredChecks);
  const failed = pull.headSha === cursor.failedChecksSha ? [] : failedChecks(counted);
  const seen: Cursor = { ...cursor };
  const lastComment = newest(
    feedback.comments.map((c) => c.id),
    cursor.lastCommentId,
  );
  const lastReview = newest(
    feedback.reviews.map((r) => r.id),
    cursor.lastReviewId,
  );
  if (lastComment !== undefined) seen.lastCommentId = lastComment;
  if (lastReview !== undefined) seen.lastReviewId = lastReview;
  if (failedChecks(counted).length > 0) seen.failedChecksSha = pull.headSha;

  if (comments.length > 0 || changes.length > 0 || failed.length > 0) {
    const round = review?.round ?? 0;
    if (round >= config.maxRounds) {
      const what = [
        comments.length > 0 ? `${comments.length} new comment(s)` : '',
        changes.length > 0 ? 'changes requested' : '',
        failed.length > 0 ? `${failed.length} failed check(s)` : '',
      ].filter((part) => part !== '');
      return {
        kind: 'max-rounds',
        cursor: seen,
        message: `pull request #${pull.number} has new feedback (${what.join(', ')}) after ${round} review round(s), the most review.max_rounds (${config.maxRounds}) allows: the loop stops; ${pull.url} needs a person`,
      };
    }
    // A review's own text is feedback too (a changes_requested review often says it all).
    const reviewTexts: ReviewComment[] = reviews
      .filter((r) => r.body.trim() !== '')
      .map((r) => ({
        id: r.id,
        path: null,
        line: null,
        author: r.author,
        body: r.body,
        createdAt: r.submittedAt,
      }));
    const context: ReviewPromptContext = {
      review: {
        round: round + 1,
        max_rounds: config.maxRounds,
        state: feedback.state,
        pull_request: {
          number: pull.number,
          url: pull.url,
          head_sha: pull.headSha,
          branch: pull.headBranch,
          base: pull.baseBranch,
        },
        comments: [...reviewTexts, ...comments].map((c) => ({
          path: c.path,
          line: c.line,
          author: c.author,
          body: c.body,
        })),
      },
      checks: {
        failed: failed.map((c) => ({
          name: c.name,
          conclusion: c.conclusion,
          output: c.outputTail,
          url: c.url,
        })),
      },
    };
    return { kind: 'round', round: round + 1, context, cursor: seen };
  }
  if (feedback.state === 'approved' && checksGreen(inputs.checks, config.requiredChecks)) {
    return { kind: 'approved', moveTo: inputs.issue.terminal ? null : config.onApproved };
  }
  const markReady = pull.draft && !inputs.issue.active;
  const pending = counted.filter((c) => c.status !== 'completed').length;
  const message =
    feedback.state === 'approved'
      ? `pull request #${pull.number} is approved; waiting for its checks${pending > 0 ? ` (${pending} running)` : ''}`
      : `waiting for the review of pull request #${pull.number}`;
  return { kind: 'wait', markReady, cursor: seen, message };
}
