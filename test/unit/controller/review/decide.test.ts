// The review loop's decisions (docs/review-loop.md), from what the code host says: merged,
// closed, a round on new feedback (comments, changes requested, failed required checks),
// max_rounds, approval with green checks, a draft marked ready; the agent's own words never count.
import { describe, expect, it } from 'vitest';
import type { ReviewStatus } from '../../../../src/api/index.js';
import type {
  CheckResult,
  PullRequest,
  PullRequestFeedback,
} from '../../../../src/codehost/types.js';
import {
  checksGreen,
  decideOpening,
  decideReview,
  idAfter,
  type ReviewInputs,
} from '../../../../src/controller/review/decide.js';
import { reviewConfig } from '../../../support/fakes/review.js';
import { eachNamedCase } from '../../../support/cases.js';

const config = reviewConfig();
const pull: PullRequest = {
  number: 7,
  url: 'https://github.example/o/r/pull/7',
  state: 'open',
  draft: false,
  title: 'ENG-1',
  headBranch: 'lorenz/eng-1',
  headSha: 'sha2',
  baseBranch: 'main',
};
const noFeedback: PullRequestFeedback = { reviews: [], comments: [], state: 'none' };
const comment = (id: string, author: string, body = 'please rename x') => ({
  id,
  path: 'src/a.ts',
  line: 3,
  author,
  body,
  createdAt: null,
});
const review = (id: string, state: 'approved' | 'changes_requested', author = 'alice') => ({
  id,
  author,
  state,
  body: state === 'approved' ? '' : 'needs tests',
  submittedAt: null,
  commitSha: 'sha2',
});
const check = (name: string, conclusion: string | null): CheckResult => ({
  name,
  status: conclusion === null ? 'in_progress' : 'completed',
  conclusion,
  outputTail: conclusion === 'failure' ? 'FAIL a.test.ts' : null,
  url: null,
});

const inputs = (over: Partial<ReviewInputs> = {}): ReviewInputs => ({
  config,
  pull,
  feedback: noFeedback,
  checks: [],
  identity: 'lorenz-bot',
  review: { phase: 'Open', round: 0 },
  issue: { active: false, terminal: false },
  ...over,
});

describe('opening', () => {
  it.each([
    ['nothing pushed', null, 'nothing'],
    ['pushed, not ahead', { aheadBy: 0, headSha: 'a' }, 'nothing'],
    ['ahead of the default branch', { aheadBy: 2, headSha: 'a' }, 'open'],
  ] as const)('%s: %s', (_name, comparison, expected) => {
    expect(decideOpening(comparison)).toBe(expected);
  });
});

describe('ids', () => {
  it.each([
    ['10', '9', true],
    ['9', '10', false],
    ['5', undefined, true],
    ['5', '5', false],
    ['b', 'a', true],
  ] as const)('%s after %s: %s', (id, cursor, expected) => {
    expect(idAfter(id, cursor)).toBe(expected);
  });
});

const cursorAt = (cursor: NonNullable<ReviewStatus['cursor']>, round = 0): ReviewStatus => ({
  phase: 'Open',
  round,
  cursor,
});

describe('the review ladder', () => {
  it.each<[string, Partial<ReviewInputs>, Record<string, unknown>]>([
    ['merged', { pull: { ...pull, state: 'merged' } }, { kind: 'merged', moveTo: 'Done' }],
    [
      'merged with the issue already terminal',
      { pull: { ...pull, state: 'merged' }, issue: { active: false, terminal: true } },
      { kind: 'merged', moveTo: null },
    ],
    ['closed', { pull: { ...pull, state: 'closed' } }, { kind: 'closed' }],
    ['no feedback', {}, { kind: 'wait', markReady: false }],
    [
      'a new comment starts round 1',
      { feedback: { ...noFeedback, comments: [comment('11', 'alice')], state: 'commented' } },
      { kind: 'round', round: 1, cursor: { lastCommentId: '11' } },
    ],
    [
      'an old comment does not',
      {
        feedback: { ...noFeedback, comments: [comment('11', 'alice')] },
        review: cursorAt({ lastCommentId: '11' }, 1),
      },
      { kind: 'wait' },
    ],
    [
      'the agent identity never counts',
      { feedback: { ...noFeedback, comments: [comment('12', 'Lorenz-Bot')] } },
      { kind: 'wait', cursor: { lastCommentId: '12' } },
    ],
    [
      'changes requested start a round',
      { feedback: { ...noFeedback, reviews: [review('40', 'changes_requested')] } },
      { kind: 'round', round: 1, cursor: { lastReviewId: '40' } },
    ],
    [
      'a failed check starts a round',
      { checks: [check('ci', 'failure'), check('lint', 'success')] },
      { kind: 'round', round: 1, cursor: { failedChecksSha: 'sha2' } },
    ],
    [
      'a failed check already acted on for this head does not',
      { checks: [check('ci', 'failure')], review: cursorAt({ failedChecksSha: 'sha2' }, 1) },
      { kind: 'wait' },
    ],
    [
      'an unrequired failed check does not',
      { config: { ...config, requiredChecks: ['ci'] }, checks: [check('lint', 'failure')] },
      { kind: 'wait' },
    ],
    [
      'feedback after max_rounds stops the loop',
      {
        feedback: { ...noFeedback, comments: [comment('13', 'alice')] },
        review: cursorAt({ lastCommentId: '11' }, 2),
      },
      { kind: 'max-rounds', cursor: { lastCommentId: '13' } },
    ],
    [
      'approved with green checks',
      {
        feedback: { ...noFeedback, reviews: [review('41', 'approved')], state: 'approved' },
        checks: [check('ci', 'success')],
      },
      { kind: 'approved', moveTo: 'Approved' },
    ],
    [
      'approved with a check running waits',
      {
        feedback: { ...noFeedback, reviews: [review('41', 'approved')], state: 'approved' },
        checks: [check('ci', null)],
      },
      { kind: 'wait', message: 'pull request #7 is approved; waiting for its checks (1 running)' },
    ],
    [
      'a draft whose issue left the active states is marked ready',
      { pull: { ...pull, draft: true }, issue: { active: false, terminal: false } },
      { kind: 'wait', markReady: true },
    ],
    [
      'a draft whose issue is active stays one',
      { pull: { ...pull, draft: true }, issue: { active: true, terminal: false } },
      { kind: 'wait', markReady: false },
    ],
  ])('%s', (_name, over, expected) => {
    expect(decideReview(inputs(over))).toMatchObject(expected);
  });

  it('puts the feedback into the round context, reviewer text as data', () => {
    const decision = decideReview(
      inputs({
        feedback: {
          reviews: [review('40', 'changes_requested'), review('41', 'approved', 'lorenz-bot')],
          comments: [comment('11', 'alice', '{{ evil }} $(rm -rf /)'), comment('12', 'lorenz-bot')],
          state: 'changes_requested',
        },
        checks: [check('ci', 'failure')],
        review: { phase: 'Open', round: 1, cursor: { lastCommentId: '10' } },
      }),
    );
    expect(decision).toEqual({
      kind: 'round',
      round: 2,
      cursor: { lastCommentId: '12', lastReviewId: '41', failedChecksSha: 'sha2' },
      context: {
        review: {
          round: 2,
          max_rounds: 2,
          state: 'changes_requested',
          pull_request: {
            number: 7,
            url: pull.url,
            head_sha: 'sha2',
            branch: 'lorenz/eng-1',
            base: 'main',
          },
          comments: [
            { path: null, line: null, author: 'alice', body: 'needs tests' },
            { path: 'src/a.ts', line: 3, author: 'alice', body: '{{ evil }} $(rm -rf /)' },
          ],
        },
        checks: {
          failed: [{ name: 'ci', conclusion: 'failure', output: 'FAIL a.test.ts', url: null }],
        },
      },
    });
  });

  it('says why max_rounds stopped the loop', () => {
    const decision = decideReview(
      inputs({ checks: [check('ci', 'failure')], review: { phase: 'Open', round: 2 } }),
    );
    expect(decision.kind === 'max-rounds' && decision.message).toBe(
      'pull request #7 has new feedback (1 failed check(s)) after 2 review round(s), the most review.max_rounds (2) allows: the loop stops; https://github.example/o/r/pull/7 needs a person',
    );
  });
});

describe('green checks', () => {
  eachNamedCase('%s', checksGreen, [
    ['no checks at all', [], [], true],
    ['all passed or skipped', [check('a', 'success'), check('b', 'skipped')], [], true],
    ['one running', [check('a', 'success'), check('b', null)], [], false],
    ['a required one missing', [check('a', 'success')], ['a', 'b'], false],
    ['only the required ones count', [check('a', 'success'), check('b', 'failure')], ['a'], true],
  ]);
});
