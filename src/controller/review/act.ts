import {
  ReviewReasons,
  rfc3339,
  type IssueRun,
  type IssueRunStatus,
  type PullRequestStatus,
  type ReviewStatus,
} from '../../api/index.js';
import type { CodeHost, PullRequest } from '../../codehost/types.js';
import type { TrackerWriter } from '../../tracker/types.js';
import type { ReviewConfig } from '../../workflow/review-config.js';
import { LifecycleReasons, reviewEvent, type LifecycleEvent } from '../events/lifecycle.js';
import { decideOpening, decideReview, type ReviewDecision } from './decide.js';

/**
 * The I/O of one look at a run awaiting review (docs/review-loop.md): what it reads from the
 * code host and writes to the tracker, and the status change and Events it ends with. The
 * reconciler (reconciler.ts) writes those; decide.ts makes every choice.
 */

/** Where a step failed: the code host and the tracker are told apart in the status. */
export class TrackerStepError extends Error {
  constructor(readonly failure: unknown) {
    super('tracker');
  }
}

export interface LookInputs {
  run: IssueRun;
  host: CodeHost;
  settings: ReviewConfig;
  branch: string;
  /** The tracker's writer; absent when the tracker cannot write (nothing is moved). */
  writer: TrackerWriter | undefined;
  issue: { active: boolean; terminal: boolean };
  /** The title and body of a pull request to open. */
  pullRequestText: (base: string) => { title: string; body: string };
  /** Writes a review round's feedback (`<run>-review-<round>`) before the round is asked for. */
  storeRound: (
    round: number,
    decision: Extract<ReviewDecision, { kind: 'round' }>,
  ) => Promise<void>;
  now: Date;
}

export interface LookResult {
  /** The change to the status (applied to the freshest one); null: none. */
  mutate: (status: IssueRunStatus) => IssueRunStatus;
  events: LifecycleEvent[];
  /** Whether the loop goes on (look again after the poll interval). */
  goesOn: boolean;
}

const tracked = <T>(work: () => Promise<T>): Promise<T> =>
  work().catch((error: unknown) => {
    throw new TrackerStepError(error);
  });

export const pullRequestStatus = (pull: PullRequest): PullRequestStatus => ({
  number: pull.number,
  url: pull.url,
  state: pull.state,
  headSha: pull.headSha,
  draft: pull.draft,
});

/** The status with these review fields (and the pull request as last read). */
export function withReview(
  status: IssueRunStatus,
  review: Partial<ReviewStatus>,
  pull?: PullRequest,
): IssueRunStatus {
  const next: IssueRunStatus = { ...status, review: { ...status.review, ...review } };
  if (pull)
    next.git = {
      branch: status.git?.branch ?? pull.headBranch,
      ...status.git,
      pullRequest: pullRequestStatus(pull),
    };
  return next;
}

/** No pull request known yet: find the open one or open it, then link it on the tracker once. */
export async function openLook(inputs: LookInputs): Promise<LookResult> {
  const { host, branch, run, settings } = inputs;
  const base = await host.defaultBranch();
  const comparison = await host.compareBranches(base, branch);
  const at = rfc3339(inputs.now);
  if (decideOpening(comparison) === 'nothing') {
    const message = `branch ${branch} is not ahead of ${base} on ${host.repository}: nothing to review`;
    return {
      mutate: (s) =>
        withReview(s, {
          phase: 'NothingToReview',
          reason: ReviewReasons.NothingToReview,
          message,
          lastCheckTime: at,
        }),
      events: [reviewEvent(run, LifecycleReasons.ReviewEnded, 'nothing', message)],
      goesOn: false,
    };
  }
  // Find before open: a restart after an open whose status write was lost opens no second one.
  let pull = await host.findOpenPullRequest(branch);
  if (!pull) {
    const text = inputs.pullRequestText(base);
    const draft = settings.draft && inputs.issue.active;
    pull = await host.openPullRequest({ head: branch, base, ...text, draft });
  }
  const opened = pull;
  const linked = await linkOnce(inputs, opened);
  const message = `pull request #${opened.number} is open: ${opened.url}`;
  return {
    mutate: (s) =>
      withReview(
        s,
        {
          phase: 'Open',
          round: s.review?.round ?? 0,
          reason: ReviewReasons.PullRequestOpened,
          message,
          lastCheckTime: at,
          ...(linked ? { linkCommented: true } : {}),
        },
        opened,
      ),
    events: [reviewEvent(run, LifecycleReasons.PullRequestOpened, `pr-${opened.number}`, message)],
    goesOn: true,
  };
}

/**
 * The tracker's one comment with the link: recorded in status.review.linkCommented, and
 * looked for among the issue's comments first (a restart between the comment and that write
 * posts none again). False when the tracker cannot write.
 */
async function linkOnce(inputs: LookInputs, pull: PullRequest): Promise<boolean> {
  const { run, writer } = inputs;
  const issueId = run.spec.issue.id;
  if (run.status?.review?.linkCommented) return true;
  if (!writer || !issueId) return false;
  return tracked(async () => {
    const comments = await writer.listComments(issueId);
    if (!comments.some((comment) => comment.body.includes(pull.url))) {
      await writer.comment(issueId, `Pull request for ${run.spec.issue.identifier}: ${pull.url}`);
    }
    return true;
  });
}

async function moveIssue(inputs: LookInputs, state: string | null): Promise<string> {
  const issueId = inputs.run.spec.issue.id;
  if (state === null || !inputs.writer || !issueId) return '';
  const writer = inputs.writer;
  await tracked(() => writer.updateState(issueId, state));
  return `; ${inputs.run.spec.issue.identifier} moved to ${state}`;
}

/** A pull request known: read it back with its feedback and checks, and act on them. */
// eslint-disable-next-line max-lines-per-function -- one switch over the decision's kinds
export async function followLook(inputs: LookInputs, number: number): Promise<LookResult> {
  const { host, run, settings } = inputs;
  const at = rfc3339(inputs.now);
  let pull = await host.getPullRequest(number);
  const open = pull.state === 'open';
  const decision = decideReview({
    config: settings,
    pull,
    feedback: open ? await host.feedback(pull) : { reviews: [], comments: [], state: 'none' },
    checks: open ? await host.checks(pull.headSha) : [],
    identity: open ? await host.identity() : null,
    review: run.status?.review,
    issue: inputs.issue,
  });
  const ended = (
    phase: ReviewStatus['phase'] & string,
    message: string,
    extra: Partial<ReviewStatus> = {},
  ): LookResult => ({
    mutate: (s) =>
      withReview(s, { phase, reason: phase, message, lastCheckTime: at, ...extra }, pull),
    events: [reviewEvent(run, LifecycleReasons.ReviewEnded, phase, message)],
    goesOn: false,
  });
  switch (decision.kind) {
    case 'merged':
      return ended(
        'Merged',
        `pull request #${pull.number} was merged${await moveIssue(inputs, decision.moveTo)}`,
      );
    case 'closed':
      return ended('PullRequestClosed', `pull request #${pull.number} was closed unmerged`);
    case 'max-rounds':
      return ended('MaxRoundsReached', decision.message, { cursor: decision.cursor });
    case 'approved':
      return ended(
        'Approved',
        `pull request #${pull.number} is approved with its checks green${await moveIssue(inputs, decision.moveTo)}`,
      );
    case 'round': {
      await inputs.storeRound(decision.round, decision);
      const { comments } = decision.context.review;
      const failed = decision.context.checks.failed.length;
      const message = `review round ${decision.round} of ${settings.maxRounds} on pull request #${pull.number}: ${comments.length} comment(s), ${failed} failed check(s)`;
      return {
        mutate: (s) =>
          withReview(
            s,
            {
              phase: 'RoundScheduled',
              requestedRound: decision.round,
              reason: ReviewReasons.ReviewRoundScheduled,
              message,
              cursor: decision.cursor,
              lastCheckTime: at,
            },
            pull,
          ),
        events: [
          reviewEvent(
            run,
            LifecycleReasons.ReviewRoundRequested,
            `round-${decision.round}`,
            message,
          ),
        ],
        goesOn: true,
      };
    }
    case 'wait': {
      if (decision.markReady) pull = await host.markReady(pull);
      const current = pull;
      return {
        mutate: (s) =>
          withReview(
            s,
            {
              phase: 'Open',
              reason: ReviewReasons.AwaitingReview,
              message: decision.message,
              cursor: decision.cursor,
              lastCheckTime: at,
            },
            current,
          ),
        events: [],
        goesOn: true,
      };
    }
  }
}
