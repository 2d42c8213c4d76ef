// The IssueRun reconciler's side of the review loop (docs/review-loop.md): an attempt that
// succeeds on a run under review waits for the review instead of ending; a round asked for
// starts the next attempt on the same branch, recorded before its Pod, with the round's feedback
// rendered into its prompt; a final review phase ends the run as it would have ended.
import { describe, expect, it } from 'vitest';
import type { IssueRunStatus, ReviewStatus } from '../../../../src/api/index.js';
import { promptInputFile } from '../../../../src/api/run-pod.js';
import { reviewContextConfigMap } from '../../../../src/controller/shared/review-context.js';
import {
  RUN,
  RUN_KEY,
  fakeRunReconciler,
  followerOf,
  issueRun,
  podName,
  runPod,
  startedStatus,
  summary,
  workflow,
  writtenStatus,
} from '../../../support/fakes/run-table.js';
import { BRANCH, reviewConfig, runnableWithReview } from '../../../support/fakes/review.js';

const review = reviewConfig({
  onApproved: null,
  continuationPrompt:
    'Round {{ review.round }} on {{ issue.identifier }}:{% for c in review.comments %} {{ c.author }} said "{{ c.body }}"{% endfor %}',
});

function setUp(reviewStatus: ReviewStatus | undefined, withReview = true) {
  const status: IssueRunStatus = {
    ...startedStatus(1, 'Running'),
    git: { branch: BRANCH },
    ...(reviewStatus ? { review: reviewStatus } : {}),
  };
  const run = issueRun({ status });
  const { client, followers, reconcile } = fakeRunReconciler({
    runs: [run],
    workflows: [workflow()],
    pods: [runPod({ phase: 'Succeeded', agent: summary({ turns: 1 }) })],
    loadWorkflowConfig: async () => runnableWithReview(withReview ? review : null),
  });
  followers.seed(followerOf(0), { completed: true, drained: true, streaming: false });
  return { client, reconcile, run };
}

describe('a run under review', () => {
  it('waits for the review when its attempt succeeds, and starts no Pod', async () => {
    const t = setUp(undefined);
    await t.reconcile(RUN_KEY);
    const status = writtenStatus<IssueRunStatus>(t.client);
    expect(status).toMatchObject({ phase: 'Pending', reason: 'AwaitingReview' });
    expect(status?.message).toBe('attempt 1 succeeded; waiting for the review of its pull request');
    expect(status?.slots?.[0]).toMatchObject({ reason: 'AwaitingReview', attempt: 1 });
    expect(t.client.summaries().filter((s) => s.startsWith('POST pods'))).toEqual([]);
  });

  it('ends as it would have with the loop off', async () => {
    const t = setUp(undefined, false);
    await t.reconcile(RUN_KEY);
    expect(writtenStatus<IssueRunStatus>(t.client)).toMatchObject({
      phase: 'Succeeded',
      reason: 'Succeeded',
    });
  });

  it.each<[string, ReviewStatus, string, string]>([
    [
      'approved',
      { phase: 'Approved', message: 'pull request #1 is approved with its checks green' },
      'Succeeded',
      'pull request #1 is approved with its checks green',
    ],
    [
      'out of rounds',
      { phase: 'MaxRoundsReached', message: 'pull request #1 has new feedback after 2 rounds' },
      'MaxRoundsReached',
      'pull request #1 has new feedback after 2 rounds',
    ],
  ])('ends once the review is final: %s', async (_name, final, reason, message) => {
    const t = setUp(final);
    await t.reconcile(RUN_KEY);
    expect(writtenStatus<IssueRunStatus>(t.client)).toMatchObject({
      phase: 'Succeeded',
      reason,
      message,
      review: final,
    });
  });

  it('starts the round asked for: recorded first, then its inputs with the feedback, then its Pod', async () => {
    const t = setUp({ phase: 'RoundScheduled', round: 0, requestedRound: 1 });
    const context = {
      review: {
        round: 1,
        max_rounds: 2,
        state: 'commented',
        pull_request: { number: 1, url: 'u', head_sha: 's', branch: BRANCH, base: 'main' },
        comments: [{ path: null, line: null, author: 'alice', body: '{{ not a template }}' }],
      },
      checks: { failed: [] },
    };
    t.client.answer({
      match: `GET configmaps/${RUN}-review-1`,
      answer: { body: reviewContextConfigMap(t.run, 1, context) },
    });
    await t.reconcile(RUN_KEY);
    const writes = t.client.summaries().filter((s) => !s.startsWith('GET'));
    expect(writes.slice(0, 1)).toEqual([`PATCH issueruns/${RUN}/status`]);
    expect(writes).toContain(`POST configmaps/${RUN}-inputs-2`);
    expect(writes).toContain(`POST pods/${podName(0, 2)}`);
    const recorded = (t.client.actions[0]?.body as Array<{ value: IssueRunStatus }>)[0]?.value;
    expect(recorded?.review).toMatchObject({ round: 1, roundAttempt: 2, phase: 'Open' });
    const inputs = t.client.actions.find((a) => a.summary === `POST configmaps/${RUN}-inputs-2`);
    const data = (inputs?.body as { data: Record<string, string> }).data;
    expect(data[promptInputFile(0)]).toBe('Round 1 on ENG-1: alice said "{{ not a template }}"');
    expect(writtenStatus<IssueRunStatus>(t.client)?.review).toMatchObject({
      round: 1,
      requestedRound: 1,
      roundAttempt: 2,
    });
  });
});
