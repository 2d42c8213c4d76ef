// The review controller against an in-memory code host and tracker writer: it opens the pull
// request once (finding it after a restart), links it on the tracker once, asks for a round on
// feedback with the feedback stored for the round's prompt, ends on approval, merge, close or
// max_rounds, looks only at runs awaiting review, and turns a code host outage into a status
// with a backoff.
import { describe, expect, it } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import type { IssueRun, IssueRunStatus, Workflow } from '../../../../src/api/index.js';
import { createRunStatusStore } from '../../../../src/controller/issuerun/status-store.js';
import {
  createReviewReconciler,
  REVIEW_RETRY_BASE_MS,
} from '../../../../src/controller/review/reconciler.js';
import { ISSUERUNS, WORKFLOWS } from '../../../../src/controller/shared/resources.js';
import { parseReviewContext } from '../../../../src/controller/shared/review-context.js';
import { renderPullRequestText } from '../../../../src/template/review.js';
import type { ReviewConfig } from '../../../../src/workflow/review-config.js';
import { FakeCodeHost, FakeTrackerWriter } from '../../../support/fakes/code-host.js';
import { FakeInformer, FakeKubeClient } from '../../../support/fakes/controller.js';
import { NS, RUN, RUN_KEY, T0, issueRun, workflow } from '../../../support/fakes/objects.js';
import { BRANCH, reviewConfig, runnableWithReview } from '../../../support/fakes/review.js';

const settings = reviewConfig({
  prTitle: '{{ issue.identifier }}: {{ issue.title }}',
  prBody: 'Closes {{ issue.identifier }} ({{ branch }} into {{ base }})',
  continuationPrompt: 'Fix: {% for c in review.comments %}{{ c.body }}{% endfor %}',
});

const awaiting = (extra: IssueRunStatus = {}): IssueRunStatus => ({
  phase: 'Pending',
  reason: 'AwaitingReview',
  git: { branch: BRANCH },
  slots: [{ slot: 0, attempt: 1, phase: 'Pending', reason: 'AwaitingReview' }],
  ...extra,
});

function setUp(initial: IssueRunStatus = awaiting(), review: ReviewConfig | null = settings) {
  const client = new FakeKubeClient();
  const run = issueRun({ status: initial });
  run.spec.issue.id = 'issue-1';
  run.spec.issue.state = 'In Review';
  const issueRuns = new FakeInformer<IssueRun>(ISSUERUNS, [run]);
  const workflows = new FakeInformer<Workflow>(WORKFLOWS, [workflow()]);
  let now = T0;
  const store = createRunStatusStore({ client, issueRuns, now: () => now, progressIntervalMs: 0 });
  const host = new FakeCodeHost();
  const tracker = new FakeTrackerWriter();
  const configMaps: V1ConfigMap[] = [];
  const events: string[] = [];
  const make = () =>
    createReviewReconciler({
      issueRuns,
      workflows,
      store,
      loadWorkflowConfig: async () => runnableWithReview(review),
      codeHost: async () => host,
      trackerWriter: async () => tracker,
      pullRequestText: (templates, issue, context) =>
        renderPullRequestText(templates, { issue, ...context }),
      createConfigMap: async (_namespace, body) => void configMaps.push(body),
      events: async (list) => void events.push(...list.map((e) => `${e.reason}: ${e.note}`)),
      now: () => now,
    });
  const status = () => store.fresh(RUN_KEY, issueRuns.get(NS, RUN) as IssueRun).status;
  /** What the cache would hold after the watch event of the last write. */
  const settle = () => issueRuns.put({ ...(issueRuns.get(NS, RUN) as IssueRun), status: status() });
  const advance = (ms: number) => {
    now = new Date(now.getTime() + ms);
  };
  return { client, host, tracker, configMaps, events, make, status, settle, advance, issueRuns };
}

describe('opening the pull request', () => {
  it('opens it once, links it on the tracker once, and finds it after a restart', async () => {
    const t = setUp();
    t.host.branches.set(BRANCH, { aheadBy: 1, headSha: 'sha1' });
    expect(await t.make().reconcile(RUN_KEY)).toEqual({ requeueAfter: 60_000 });
    expect(t.host.calls).toEqual([
      'defaultBranch',
      `compare main...${BRANCH}`,
      `find ${BRANCH}`,
      `open ${BRANCH}: ENG-1: Fix the bug`,
    ]);
    expect(t.status()?.git?.pullRequest).toEqual({
      number: 1,
      url: 'https://github.example/acme/app/pull/1',
      state: 'open',
      headSha: 'sha1',
      draft: false,
    });
    expect(t.status()?.review).toMatchObject({
      phase: 'Open',
      round: 0,
      reason: 'PullRequestOpened',
      linkCommented: true,
    });
    expect(t.tracker.writes).toEqual([
      'comment issue-1: Pull request for ENG-1: https://github.example/acme/app/pull/1',
    ]);
    expect(t.events).toEqual([
      'PullRequestOpened: pull request #1 is open: https://github.example/acme/app/pull/1',
    ]);

    // The status write was lost in a restart: the open pull request is found, not opened again,
    // and the tracker comment already there is not posted again.
    const lost = setUp();
    lost.host.branches.set(BRANCH, { aheadBy: 1, headSha: 'sha1' });
    lost.host.pulls.push(...t.host.pulls);
    lost.tracker.comments.push(...t.tracker.comments);
    await lost.make().reconcile(RUN_KEY);
    expect(lost.host.calls.filter((c) => c.startsWith('open'))).toEqual([]);
    expect(lost.tracker.writes).toEqual([]);
    expect(lost.status()?.git?.pullRequest?.number).toBe(1);
  });

  it.each([
    ['nothing pushed', null],
    ['pushed but not ahead', { aheadBy: 0, headSha: 'sha0' }],
  ])('%s: NothingToReview, no pull request', async (_name, comparison) => {
    const t = setUp();
    if (comparison) t.host.branches.set(BRANCH, comparison);
    expect(await t.make().reconcile(RUN_KEY)).toBeUndefined();
    expect(t.status()?.review).toMatchObject({
      phase: 'NothingToReview',
      reason: 'NothingToReview',
      message: `branch ${BRANCH} is not ahead of main on acme/app: nothing to review`,
    });
    expect(t.host.calls.some((c) => c.startsWith('open'))).toBe(false);
  });

  it('opens a draft while the issue is active and the config asks', async () => {
    const t = setUp(awaiting(), { ...settings, draft: true });
    t.host.branches.set(BRANCH, { aheadBy: 1, headSha: 'sha1' });
    const reconciler = t.make();
    (t.issueRuns.get(NS, RUN) as IssueRun).spec.issue.state = 'In Progress';
    await reconciler.reconcile(RUN_KEY);
    expect(t.host.calls.at(-1)).toBe(`open ${BRANCH} (draft): ENG-1: Fix the bug`);
  });
});

const opened = (review: IssueRunStatus['review'] = {}) =>
  awaiting({
    git: {
      branch: BRANCH,
      pullRequest: { number: 1, url: 'https://github.example/acme/app/pull/1', state: 'open' },
    },
    review: { phase: 'Open', round: 0, lastCheckTime: '2026-03-01T09:59:00Z', ...review },
  });

function withPull(status: IssueRunStatus, review: ReviewConfig = settings) {
  const t = setUp(status, review);
  t.host.pulls.push({
    number: 1,
    url: 'https://github.example/acme/app/pull/1',
    state: 'open',
    draft: false,
    title: 'ENG-1',
    headBranch: BRANCH,
    headSha: 'sha1',
    baseBranch: 'main',
  });
  return t;
}

describe('following the pull request', () => {
  it('asks for a round on a review comment, with the feedback stored for its prompt', async () => {
    const t = withPull(opened());
    t.host.feedbackOf.set(1, {
      reviews: [],
      comments: [
        { id: '5', path: 'a.ts', line: 2, author: 'alice', body: 'rename x', createdAt: null },
        { id: '6', path: null, line: null, author: 'lorenz-bot', body: 'done', createdAt: null },
      ],
      state: 'commented',
    });
    expect(await t.make().reconcile(RUN_KEY)).toEqual({ requeueAfter: 60_000 });
    expect(t.status()?.review).toMatchObject({
      phase: 'RoundScheduled',
      round: 0,
      requestedRound: 1,
      reason: 'ReviewRoundScheduled',
      cursor: { lastCommentId: '6' },
    });
    expect(t.configMaps.map((c) => c.metadata?.name)).toEqual([`${RUN}-review-1`]);
    const context = parseReviewContext(t.configMaps[0] as V1ConfigMap);
    expect(context.review.comments).toEqual([
      { path: 'a.ts', line: 2, author: 'alice', body: 'rename x' },
    ]);
    expect(t.configMaps[0]?.metadata?.ownerReferences?.[0]?.kind).toBe('IssueRun');
    expect(t.events).toEqual([
      'ReviewRoundRequested: review round 1 of 2 on pull request #1: 1 comment(s), 0 failed check(s)',
    ]);
  });

  it('leaves a run whose round is asked for to the IssueRun reconciler', async () => {
    const t = withPull(opened({ requestedRound: 1, round: 0, phase: 'RoundScheduled' }));
    expect(await t.make().reconcile(RUN_KEY)).toBeUndefined();
    expect(t.host.calls).toEqual([]);
  });

  it.each<[string, IssueRunStatus]>([
    [
      'an attempt running',
      { ...opened(), phase: 'Running', slots: [{ slot: 0, phase: 'Running', reason: 'Running' }] },
    ],
    ['a finished run', { ...opened(), phase: 'Succeeded' }],
    ['a final review', opened({ phase: 'Approved' })],
  ])('looks not at %s', async (_name, status) => {
    const t = withPull(status);
    expect(await t.make().reconcile(RUN_KEY)).toBeUndefined();
    expect(t.host.calls).toEqual([]);
  });

  it('waits out the poll interval, unless woken', async () => {
    const t = withPull(opened({ lastCheckTime: '2026-03-01T09:59:30Z' }));
    const reconciler = t.make();
    expect(await reconciler.reconcile(RUN_KEY)).toEqual({ requeueAfter: 30_000 });
    expect(t.host.calls).toEqual([]);
    reconciler.wake(RUN_KEY);
    expect(await reconciler.reconcile(RUN_KEY)).toEqual({ requeueAfter: 60_000 });
    expect(t.host.calls[0]).toBe('get #1');
    expect(t.status()?.review?.lastCheckTime).toBe('2026-03-01T10:00:00Z');
  });

  it.each<[string, (t: ReturnType<typeof withPull>) => void, string, string[]]>([
    [
      'approved with green checks: the issue moves to on_approved',
      (t) => {
        t.host.feedbackOf.set(1, {
          reviews: [
            {
              id: '9',
              author: 'alice',
              state: 'approved',
              body: '',
              submittedAt: null,
              commitSha: 'sha1',
            },
          ],
          comments: [],
          state: 'approved',
        });
        t.host.checksOf.set('sha1', [
          { name: 'ci', status: 'completed', conclusion: 'success', outputTail: null, url: null },
        ]);
      },
      'Approved',
      ['state issue-1: Approved'],
    ],
    [
      'merged: the issue moves to on_merged',
      (t) => {
        (t.host.pulls[0] as { state: string }).state = 'merged';
      },
      'Merged',
      ['state issue-1: Done'],
    ],
    [
      'closed: nothing moves',
      (t) => {
        (t.host.pulls[0] as { state: string }).state = 'closed';
      },
      'PullRequestClosed',
      [],
    ],
  ])('%s', async (_name, arrange, phase, writes) => {
    const t = withPull(opened());
    arrange(t);
    expect(await t.make().reconcile(RUN_KEY)).toBeUndefined();
    expect(t.status()?.review?.phase).toBe(phase);
    expect(t.status()?.review?.reason).toBe(phase);
    expect(t.tracker.writes).toEqual(writes);
    expect(t.events[0]).toMatch(/^ReviewEnded: pull request #1/);
  });

  it('stops at max_rounds with a clear reason', async () => {
    const t = withPull(opened({ round: 2, requestedRound: 2, roundAttempt: 3 }));
    t.host.checksOf.set('sha1', [
      { name: 'ci', status: 'completed', conclusion: 'failure', outputTail: 'x', url: null },
    ]);
    await t.make().reconcile(RUN_KEY);
    expect(t.status()?.review).toMatchObject({
      phase: 'MaxRoundsReached',
      reason: 'MaxRoundsReached',
      cursor: { failedChecksSha: 'sha1' },
    });
    expect(t.status()?.review?.message).toMatch(
      /after 2 review round\(s\), the most review.max_rounds \(2\) allows/,
    );
    expect(t.configMaps).toEqual([]);
  });

  it('marks a draft ready once its issue left the active states', async () => {
    const t = withPull(opened());
    (t.host.pulls[0] as { draft: boolean }).draft = true;
    await t.make().reconcile(RUN_KEY);
    expect(t.host.calls).toContain('ready #1');
    expect(t.status()?.git?.pullRequest?.draft).toBe(false);
  });
});

describe('failures', () => {
  it('a code host outage is a status and a backoff, never a crash; the next look goes on', async () => {
    const t = withPull(opened());
    t.host.failNext = 'GitHub answered 502';
    const reconciler = t.make();
    expect(await reconciler.reconcile(RUN_KEY)).toEqual({ requeueAfter: REVIEW_RETRY_BASE_MS });
    expect(t.status()?.review).toMatchObject({
      phase: 'Open',
      reason: 'CodeHostUnavailable',
      message: 'the code host failed: GitHub answered 502',
    });
    t.host.failNext = 'again';
    expect(await reconciler.reconcile(RUN_KEY)).toEqual({ requeueAfter: 2 * REVIEW_RETRY_BASE_MS });
    expect(await reconciler.reconcile(RUN_KEY)).toEqual({ requeueAfter: 60_000 });
    expect(t.status()?.review?.reason).toBe('AwaitingReview');
  });

  it('a tracker that refuses the link comment says so, and the comment is tried again', async () => {
    const t = setUp();
    t.host.branches.set(BRANCH, { aheadBy: 1, headSha: 'sha1' });
    t.tracker.fail = true;
    const reconciler = t.make();
    expect(await reconciler.reconcile(RUN_KEY)).toEqual({ requeueAfter: REVIEW_RETRY_BASE_MS });
    expect(t.status()?.review?.reason).toBe('TrackerUnavailable');
    t.tracker.fail = false;
    await reconciler.reconcile(RUN_KEY);
    expect(t.host.calls.filter((c) => c.startsWith('open'))).toHaveLength(1);
    expect(t.tracker.writes).toHaveLength(1);
    expect(t.status()?.review?.linkCommented).toBe(true);
  });

  it('does nothing for a Workflow without review:', async () => {
    const t = setUp(awaiting(), null);
    expect(await t.make().reconcile(RUN_KEY)).toBeUndefined();
    expect(t.host.calls).toEqual([]);
  });
});
