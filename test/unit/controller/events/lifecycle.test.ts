// The Events of a run's life and of its Workflow's, as read off one status change: which
// ones, their names (the same however often the change is computed: a restarted controller
// meets 409) and what their notes say.
import { describe, expect, it } from 'vitest';
import {
  Reasons,
  type Condition,
  type IssueRun,
  type IssueRunStatus,
  type Workflow,
} from '../../../../src/api/index.js';
import {
  LifecycleReasons,
  runLifecycleEvents,
  workflowLifecycleEvents,
  type LifecycleEvent,
} from '../../../../src/controller/events/lifecycle.js';
import { dispatchedRun } from '../../../../src/controller/workflow/poll.js';
import { normalizeIssue } from '../../../../src/workflow/issue.js';
import { RUN, RUN_UID, issueRun, workflow } from '../../../support/fakes/objects.js';

const cond = (
  type: string,
  status: Condition['status'],
  reason: string,
  message = '',
  since = '2026-03-01T10:00:00Z',
): Condition => ({ type, status, reason, message, lastTransitionTime: since });

const running: IssueRunStatus = {
  conditions: [cond('Finished', 'False', 'Running')],
  slots: [{ slot: 0, phase: 'Running', reason: 'Running', podName: `${RUN}-0-1`, attempt: 1 }],
};
const retrying: IssueRunStatus = {
  conditions: [cond('Finished', 'False', 'RetryScheduled')],
  slots: [
    {
      slot: 0,
      phase: 'Pending',
      reason: Reasons.RetryScheduled,
      message:
        'attempt 1 failed (HookFailed: before_run exited 1); attempt 2 starts at 2026-03-01T10:00:10Z',
      podName: `${RUN}-0-1`,
      attempt: 1,
    },
  ],
};
const second: IssueRunStatus = {
  conditions: [cond('Finished', 'False', 'Running')],
  slots: [{ slot: 0, phase: 'Running', reason: 'Running', podName: `${RUN}-0-2`, attempt: 2 }],
};
const ended = (succeeded: boolean, reason: string, message: string): IssueRunStatus => ({
  reason,
  message,
  conditions: [
    cond('Finished', 'True', reason, message),
    cond('Succeeded', succeeded ? 'True' : 'False', reason, message),
  ],
  slots: [{ slot: 0, phase: succeeded ? 'Succeeded' : 'Failed', reason, attempt: 2 }],
});

const uid8 = RUN_UID.replace(/[^0-9a-zA-Z]/g, '')
  .slice(0, 8)
  .toLowerCase();
const view = (events: LifecycleEvent[]) =>
  events.map(
    (event) => `${event.reason} ${event.type} ${event.regarding.kind} ${event.name}: ${event.note}`,
  );

const run = issueRun();
const owner = workflow();
const made = dispatchedRun(
  owner,
  normalizeIssue({ id: 'i1', identifier: 'ENG-1', title: 'Fix', state: 'Todo' }),
);
const dispatched: IssueRun = {
  ...made,
  metadata: { ...made.metadata, namespace: 'ns', uid: RUN_UID },
};

const RUN_ROWS: Array<[string, IssueRun, IssueRunStatus | undefined, IssueRunStatus, string[]]> = [
  [
    'a dispatched run’s first status: dispatched, on its Workflow',
    dispatched,
    undefined,
    { conditions: [cond('Finished', 'False', 'Pending')] },
    [
      `IssueDispatched Normal Workflow ${owner.metadata.name}.${(owner.metadata.uid ?? '')
        .replace(/[^0-9a-zA-Z]/g, '')
        .slice(0, 8)
        .toLowerCase()}.dispatched-${uid8}: dispatched ENG-1 as IssueRun wf-eng-1`,
    ],
  ],
  [
    'a hand-made run’s first status: nothing',
    run,
    undefined,
    { conditions: [cond('Finished', 'False', 'Pending')] },
    [],
  ],
  [
    'its Pod runs: attempt 1 started',
    run,
    { conditions: [cond('Finished', 'False', 'Pending')] },
    running,
    [
      `AttemptStarted Normal IssueRun ${RUN}.${uid8}.0-1-started: attempt 1 of slot 0 started: Pod ${RUN}-0-1 is running`,
    ],
  ],
  ['still running: nothing', run, running, running, []],
  [
    'attempt 1 failed: the retry, naming the attempt and when the next starts',
    run,
    running,
    retrying,
    [
      `RetryScheduled Warning IssueRun ${RUN}.${uid8}.0-1-retry: slot 0: attempt 1 failed (HookFailed: before_run exited 1); attempt 2 starts at 2026-03-01T10:00:10Z`,
    ],
  ],
  ['still waiting: nothing', run, retrying, retrying, []],
  [
    'attempt 2 runs: attempt 2 started',
    run,
    retrying,
    second,
    [
      `AttemptStarted Normal IssueRun ${RUN}.${uid8}.0-2-started: attempt 2 of slot 0 started: Pod ${RUN}-0-2 is running`,
    ],
  ],
  [
    'it succeeded: the reason and message',
    run,
    second,
    ended(true, Reasons.IssueCompleted, 'ENG-1 reached Done'),
    [`RunSucceeded Normal IssueRun ${RUN}.${uid8}.finished: IssueCompleted: ENG-1 reached Done`],
  ],
  [
    'it failed',
    run,
    second,
    ended(false, Reasons.HookFailed, 'before_run exited 1'),
    [`RunFailed Warning IssueRun ${RUN}.${uid8}.finished: HookFailed: before_run exited 1`],
  ],
  [
    'it was cancelled: what stopped it',
    run,
    second,
    ended(false, Reasons.Cancelled, 'cancelled: ENG-1 moved to Backlog'),
    [
      `RunCancelled Warning IssueRun ${RUN}.${uid8}.finished: Cancelled: cancelled: ENG-1 moved to Backlog`,
    ],
  ],
  [
    'an end seen again: nothing',
    run,
    ended(true, 'Succeeded', 'ok'),
    ended(true, 'Succeeded', 'ok'),
    [],
  ],
];

describe('the Events of a run’s life', () => {
  it.each(RUN_ROWS)('%s', (_name, object, before, after, want) => {
    const events = runLifecycleEvents(object, before, after);
    expect(view(events)).toEqual(want);
    // Computed again (a restart before the status write): the same names.
    expect(runLifecycleEvents(object, before, after).map((event) => event.name)).toEqual(
      events.map((event) => event.name),
    );
  });
});

const wf: Workflow = workflow();
const valid = cond('ConfigValid', 'True', 'ConfigValid', 'loaded from spec.workflow');
const rejected = (message: string) =>
  cond('ConfigValid', 'False', 'ConfigInvalid', message, '2026-03-01T10:01:00Z');
const up = cond('TrackerReachable', 'True', 'Polled', 'the tracker answered the last poll');
const down = cond(
  'TrackerReachable',
  'False',
  'tracker_request',
  'connect ECONNREFUSED 127.0.0.1:9',
  '2026-03-01T10:02:00Z',
);

const WORKFLOW_ROWS: Array<[string, Condition[] | undefined, Condition[], string[]]> = [
  [
    'a spec that never loaded: rejected, with the error',
    undefined,
    [rejected('invalid_workflow_config: agent.max_turns: must be ≥ 1')],
    [
      'ConfigRejected Warning: ConfigInvalid: invalid_workflow_config: agent.max_turns: must be ≥ 1',
    ],
  ],
  [
    'a bad edit: rejected',
    [valid],
    [rejected('workflow_parse_error: line 2')],
    ['ConfigRejected Warning: ConfigInvalid: workflow_parse_error: line 2'],
  ],
  ['the same error seen again: nothing', [rejected('x')], [rejected('x')], []],
  [
    'another error: rejected again',
    [rejected('x')],
    [rejected('y')],
    ['ConfigRejected Warning: ConfigInvalid: y'],
  ],
  ['fixed: nothing', [rejected('x')], [valid], []],
  [
    'the first poll fails: unreachable',
    [valid],
    [valid, down],
    ['TrackerUnreachable Warning: tracker_request: connect ECONNREFUSED 127.0.0.1:9'],
  ],
  [
    'a reachable tracker fails: unreachable',
    [valid, up],
    [valid, down],
    ['TrackerUnreachable Warning: tracker_request: connect ECONNREFUSED 127.0.0.1:9'],
  ],
  [
    'it fails again: nothing (once per transition)',
    [valid, down],
    [valid, { ...down, message: 'timeout' }],
    [],
  ],
  [
    'it answers again: back',
    [valid, down],
    [valid, up],
    [
      'TrackerReachable Normal: the tracker answers again (it failed since 2026-03-01T10:02:00Z: tracker_request)',
    ],
  ],
  ['it keeps answering: nothing', [valid, up], [valid, up], []],
];

describe('the Events of a Workflow', () => {
  it.each(WORKFLOW_ROWS)('%s', (_name, before, after, want) => {
    const events = workflowLifecycleEvents(wf, before, after);
    expect(events.map((event) => `${event.reason} ${event.type}: ${event.note}`)).toEqual(want);
    for (const event of events) {
      expect(event.regarding).toMatchObject({
        kind: 'Workflow',
        name: wf.metadata.name,
        uid: wf.metadata.uid,
      });
      expect(event.name.startsWith(`${wf.metadata.name}.`)).toBe(true);
    }
    expect(workflowLifecycleEvents(wf, before, after).map((event) => event.name)).toEqual(
      events.map((event) => event.name),
    );
  });

  it('names each transition apart: two outages are two Events, one outage seen twice is one', () => {
    const first = workflowLifecycleEvents(wf, [up], [down]);
    const again = workflowLifecycleEvents(wf, [up], [down]);
    const later = workflowLifecycleEvents(
      wf,
      [{ ...up, lastTransitionTime: '2026-03-01T11:00:00Z' }],
      [down],
    );
    expect(again[0]?.name).toBe(first[0]?.name);
    expect(later[0]?.name).not.toBe(first[0]?.name);
    expect(first[0]?.reason).toBe(LifecycleReasons.TrackerUnreachable);
  });
});
