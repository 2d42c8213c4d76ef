// Which changes of an IssueRun the inbox controller looks at (cheaply, before any config is
// read), and which runs a tracker webhook's `poll` wake makes read their issue at once.
import { describe, expect, it } from 'vitest';
import {
  inboxRequestAnnotation,
  inboxSteeredAnnotation,
  type IssueRun,
  type IssueRunStatus,
} from '../../../../src/api/index.js';
import type { ApprovalsKnown } from '../../../../src/controller/inbox/reconciler.js';
import { runsToWake, wantsLook } from '../../../../src/controller/inbox/setup.js';
import {
  NS,
  at,
  finishedStatus,
  issueRun,
  startedStatus,
  permissionRequest,
} from '../../../support/fakes/objects.js';
import { eachNamedCase } from '../../../support/cases.js';

const pending = permissionRequest({ deadline: at(1000) });

function run(
  status: IssueRunStatus | undefined,
  extra: {
    annotations?: Record<string, string>;
    decisions?: boolean;
    name?: string;
    deleting?: boolean;
  } = {},
): IssueRun {
  const made = issueRun({
    ...(status ? { status } : {}),
    ...(extra.name ? { name: extra.name } : {}),
    ...(extra.deleting ? { deleting: true } : {}),
    spec: extra.decisions ? { decisions: [{ requestId: 'a1-s0-1', verdict: 'approve' }] } : {},
  });
  if (extra.annotations) made.metadata.annotations = extra.annotations;
  return made;
}

const unknown = () => undefined;
const steers = (): ApprovalsKnown => ({ steering: true });
const quiet = (): ApprovalsKnown => ({ steering: false });
const none = (): ApprovalsKnown => null;
const pendingStatus: IssueRunStatus = {
  ...startedStatus(1, 'Running'),
  inbox: { pending: [pending] },
};
const running = startedStatus(1, 'Running');
/** A run that has just ended with steer 2 on it, slot 0 having taken the steers up to `seq`. */
const endedSteered = (seq: string): IssueRun =>
  run(
    { ...finishedStatus(0), inbox: { steers: [{ seq: 2, text: 't', at: at(0) }] } },
    { annotations: { [inboxSteeredAnnotation(0)]: seq } },
  );

describe('which run changes the inbox looks at', () => {
  eachNamedCase('%s: %s', wantsLook, [
    [
      'a request left by the gateway',
      run(running, { annotations: { [inboxRequestAnnotation('a1-s0-1')]: '{}' } }),
      undefined,
      none,
      true,
    ],
    ['a pending request', run(pendingStatus), undefined, quiet, true],
    ['new spec.decisions', run(running, { decisions: true }), run(running), quiet, true],
    [
      'spec.decisions unchanged',
      run(startedStatus(), { decisions: true }),
      run(startedStatus(), { decisions: true }),
      quiet,
      false,
    ],
    ['a running run of a Workflow not looked at yet', run(running), undefined, unknown, true],
    ['a running run of a Workflow that steers', run(running), undefined, steers, true],
    ['a running run of a Workflow that does not steer', run(running), undefined, quiet, false],
    ['a running run of a Workflow without approvals', run(running), undefined, none, false],
    ['a pending (not running) run', run(startedStatus()), undefined, steers, false],
    ['a run being deleted', run(pendingStatus, { deleting: true }), undefined, steers, false],
    [
      'a run that just ended with a steer no slot took',
      endedSteered('1'),
      run(running),
      quiet,
      true,
    ],
    ['a run that ended with every steer taken', endedSteered('2'), run(running), quiet, false],
  ]);
});

describe('a poll wake', () => {
  const runs = [
    run(pendingStatus, { name: 'waits' }),
    run(running, { name: 'runs' }),
    run(startedStatus(), { name: 'idle' }),
  ];

  it.each<[string, () => ApprovalsKnown | undefined, string[]]>([
    ['steering on: the runs waiting or running', steers, [`${NS}/waits`, `${NS}/runs`]],
    ['steering off: the runs waiting', quiet, [`${NS}/waits`]],
  ])('%s', (_name, known, expected) => {
    expect(runsToWake(runs, { kind: 'poll', namespace: NS, workflow: 'wf' }, known)).toEqual(
      expected,
    );
  });

  it("is for its Workflow only, and a review wake is not the inbox's", () => {
    expect(runsToWake(runs, { kind: 'poll', namespace: NS, workflow: 'other' }, steers)).toEqual(
      [],
    );
    expect(runsToWake(runs, { kind: 'review', namespace: NS, workflow: 'wf' }, steers)).toEqual([]);
  });
});
