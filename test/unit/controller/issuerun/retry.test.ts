// The review kind of the retry policy (docs/review-loop.md): a run under review whose attempt
// succeeded with no continuation waits for its pull request's review instead of ending; a
// round the review controller asks for starts the next attempt; a final review phase ends it.
import { describe, expect, it } from 'vitest';
import type { IssueRunStatus, ReviewStatus } from '../../../../src/api/index.js';
import type { PodOutcome } from '../../../../src/controller/issuerun/pod-status.js';
import {
  nextAttempt,
  planRetries,
  reviewRoundDue,
} from '../../../../src/controller/issuerun/retry.js';
import type { SlotView } from '../../../../src/controller/issuerun/status.js';
import { T0, issueRun, podName } from '../../../support/fakes/objects.js';

const outcome = (phase: PodOutcome['phase']): PodOutcome => ({
  phase,
  reason: phase === 'Succeeded' ? 'Succeeded' : 'AgentFailed',
  message: 'm',
  finished: true,
  summary: null,
});

const withReview = (review: ReviewStatus | undefined, extra: IssueRunStatus = {}) =>
  issueRun({
    spec: { retries: 1 },
    status: { ...extra, ...(review ? { review } : {}) },
  });

describe('the review kind of the next attempt', () => {
  it.each<[string, ReviewStatus | undefined, PodOutcome['phase'], boolean, boolean, string | null]>(
    [
      ['a success under review waits for it', undefined, 'Succeeded', false, true, 'review'],
      ['an open review waits', { phase: 'Open' }, 'Succeeded', false, true, 'review'],
      ['a success with the loop off ends', undefined, 'Succeeded', false, false, null],
      ['an approved review ends the run', { phase: 'Approved' }, 'Succeeded', false, true, null],
      ['a merged pull request ends it', { phase: 'Merged' }, 'Succeeded', false, true, null],
      ['a closed one ends it', { phase: 'PullRequestClosed' }, 'Succeeded', false, true, null],
      ['max rounds end it', { phase: 'MaxRoundsReached' }, 'Succeeded', false, true, null],
      ['nothing to review ends it', { phase: 'NothingToReview' }, 'Succeeded', false, true, null],
      ['a failure is retried as today', { phase: 'Open' }, 'Failed', false, true, 'retry'],
    ],
  )('%s', (_name, review, phase, active, reviewing, expected) => {
    expect(nextAttempt(withReview(review), outcome(phase), 1, active, reviewing)).toBe(expected);
  });

  it('continues while the issue is active, before any review', () => {
    const run = issueRun({ spec: { continueWhileActive: true } });
    expect(nextAttempt(run, outcome('Succeeded'), 1, true, true)).toBe('continuation');
    expect(nextAttempt(run, outcome('Succeeded'), 1, false, true)).toBe('review');
  });

  it('never follows a cancelled run', () => {
    const run = issueRun({ spec: { cancelRequested: true } });
    expect(nextAttempt(run, outcome('Succeeded'), 1, false, true)).toBeNull();
  });
});

describe('when a review round is due', () => {
  it.each<[string, ReviewStatus | undefined, number, number | null]>([
    ['no review yet', undefined, 1, null],
    ['waiting, nothing asked', { round: 0, requestedRound: 0 }, 1, null],
    ['a round asked for', { round: 0, requestedRound: 1 }, 1, 1],
    ['the next round asked for', { round: 1, requestedRound: 2, roundAttempt: 2 }, 2, 2],
    ['round started, its Pod never made', { round: 1, requestedRound: 1, roundAttempt: 2 }, 1, 1],
    [
      'round started and its attempt ran',
      { round: 1, requestedRound: 1, roundAttempt: 2 },
      2,
      null,
    ],
  ])('%s', (_name, review, attempt, expected) => {
    expect(reviewRoundDue(withReview(review), attempt)).toBe(expected);
  });
});

describe('planning a run under review', () => {
  const view: SlotView = {
    slot: 0,
    attempt: 1,
    podName: podName(0),
    outcome: outcome('Succeeded'),
  };
  const pull = {
    git: {
      branch: 'lorenz/eng-1',
      pullRequest: { number: 7, url: 'https://h/o/r/pull/7', state: 'open' as const },
    },
  };

  it('shows the slot waiting for review, with no timer', () => {
    const plan = planRetries(withReview({ phase: 'Open' }, pull), [view], 300_000, T0, false, true);
    expect(plan.views[0]?.outcome).toMatchObject({
      phase: 'Pending',
      reason: 'AwaitingReview',
      message: 'attempt 1 succeeded; waiting for the review of pull request https://h/o/r/pull/7',
      finished: false,
    });
    expect(plan.retrying).toHaveLength(1);
    expect(plan.due.size).toBe(0);
    expect(plan.wakeAt).toBeUndefined();
    expect(plan.reviewRound).toBeUndefined();
  });

  it('starts the next attempt at once when a round is asked for', () => {
    const run = withReview({ phase: 'RoundScheduled', round: 0, requestedRound: 1 }, pull);
    const plan = planRetries(run, [view], 300_000, T0, false, true);
    expect([...plan.due]).toEqual([[2, [0]]]);
    expect(plan.reviewRound).toBe(1);
    expect(plan.views[0]?.outcome?.reason).toBe('Succeeded');
  });

  it('leaves the success alone once the review is final (the run ends)', () => {
    const plan = planRetries(withReview({ phase: 'Approved' }), [view], 300_000, T0, false, true);
    expect(plan.retrying).toHaveLength(0);
    expect(plan.views[0]?.outcome?.reason).toBe('Succeeded');
  });
});
