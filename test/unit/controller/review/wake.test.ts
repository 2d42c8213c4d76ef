// A `review` wake (a code host webhook) hurries the look at the Workflow's runs awaiting
// review, on the branch the delivery names; runs of other Workflows, runs at work and poll
// wakes are left alone.
import { describe, expect, it } from 'vitest';
import type { IssueRun, IssueRunStatus } from '../../../../src/api/index.js';
import { runsToWake } from '../../../../src/controller/review/setup.js';
import type { WakeTarget } from '../../../../src/controller/shared/wake.js';
import { NS, issueRun } from '../../../support/fakes/objects.js';

const waiting = (branch: string): IssueRunStatus => ({
  phase: 'Pending',
  git: { branch },
  slots: [{ slot: 0, attempt: 1, reason: 'AwaitingReview' }],
});
const run = (name: string, workflow: string, status: IssueRunStatus): IssueRun => {
  const made = issueRun({ name, status });
  made.spec.workflowRef.name = workflow;
  return made;
};
const RUNS = [
  run('a-1', 'a', waiting('lorenz/a-1')),
  run('a-2', 'a', waiting('lorenz/a-2')),
  run('a-3', 'a', {
    phase: 'Running',
    git: { branch: 'lorenz/a-3' },
    slots: [{ slot: 0, reason: 'Running' }],
  }),
  run('b-1', 'b', waiting('lorenz/b-1')),
];

describe('which runs a wake is for', () => {
  it.each<[string, WakeTarget, string[]]>([
    ['a Workflow', { kind: 'review', namespace: NS, workflow: 'a' }, [`${NS}/a-1`, `${NS}/a-2`]],
    [
      'a branch',
      { kind: 'review', namespace: NS, workflow: 'a', branch: 'lorenz/a-2' },
      [`${NS}/a-2`],
    ],
    ['a run at work', { kind: 'review', namespace: NS, workflow: 'a', branch: 'lorenz/a-3' }, []],
    ['another Workflow', { kind: 'review', namespace: NS, workflow: 'b' }, [`${NS}/b-1`]],
    ['another namespace', { kind: 'review', namespace: 'other', workflow: 'a' }, []],
    ['a poll wake', { kind: 'poll', namespace: NS, workflow: 'a' }, []],
  ])('%s', (_name, target, expected) => {
    expect(runsToWake(RUNS, target)).toEqual(expected);
  });
});
