// How a run that ends reads: its own success, a success because its issue reached a
// terminal state after its work (IssueCompleted), a cancellation that says what moved the
// issue where, and a failure. One reconcile each, through the reconciler.
import { describe, it } from 'vitest';
import { Reasons, type IssueRun } from '../../../../src/api/index.js';
import {
  RUN,
  at,
  issueRun,
  playRun,
  podName,
  runEnded,
  runOnce,
  runPod,
  startedStatus,
  summary,
  type RunRow,
} from '../../../support/fakes/run-table.js';

const NOTE =
  'ENG-1 moved to Backlog (out of the active states) while the run worked on it; the memory tracker does not say who moved it';

const DONE_NOTE =
  'ENG-1 moved to Done (a terminal state) while the run worked on it; the memory tracker does not say who moved it';
/** The run's end as Succeeded IssueCompleted, with this message. */
const completed = (message: string, more: Parameters<typeof runEnded>[2] = {}) =>
  runEnded('Succeeded', Reasons.IssueCompleted, { message, ...more });
/** The run's end as Failed Cancelled, with this message. */
const cancelledWith = (message: string) => runEnded('Failed', Reasons.Cancelled, { message });

/** A run whose issue is in `state`; stopped by the dispatcher when `note` is given. */
function run(
  state: string,
  options: { cancelled?: boolean; note?: string; attempt?: number } = {},
) {
  const base = issueRun({
    spec: { cancelRequested: options.cancelled === true, continueWhileActive: true },
    status: startedStatus(1, 'Running'),
  });
  const slots = base.status?.slots?.map((slot) => ({ ...slot, attempt: options.attempt ?? 1 }));
  const withState: IssueRun = {
    ...base,
    metadata: {
      ...base.metadata,
      ...(options.note ? { annotations: { 'lorenz.dev/stop-note': options.note } } : {}),
    },
    spec: { ...base.spec, issue: { ...base.spec.issue, state } },
    status: { ...base.status, ...(slots ? { slots, podName: slots[0]?.podName } : {}) },
  };
  if (options.attempt && withState.status?.slots?.[0]) {
    withState.status.slots[0].podName = podName(0, options.attempt);
  }
  return withState;
}

const cancelledPod = (attempt = 1) =>
  runPod({ phase: 'Failed', attempt, agent: summary({ succeeded: false, cancelled: true }) });

const rows: RunRow[] = [
  {
    name: 'its own attempt succeeded, the issue still active: Succeeded',
    run: issueRun({ status: startedStatus(1, 'Running') }),
    pods: [runPod({ phase: 'Succeeded', agent: summary({ turns: 1 }) })],
    steps: runOnce(runEnded('Succeeded', Reasons.Succeeded), {
      logs: [{ slot: 0, completed: true, turns: 1 }],
    }),
  },
  {
    // A hand-made run: `spec.issue.state` patched to Done ends the turn loop; so does an
    // agent whose last turn closed the issue.
    name: 'its attempt succeeded with the issue terminal: IssueCompleted',
    run: { ...run('Done'), spec: { ...run('Done').spec, continueWhileActive: false } },
    pods: [runPod({ phase: 'Succeeded', agent: summary({ turns: 1 }) })],
    steps: runOnce(
      completed("ENG-1 reached Done (a terminal state) after the run's work: attempt 1 succeeded", {
        completionTime: at(0),
      }),
      { logs: [{ slot: 0, completed: true, turns: 1 }] },
    ),
  },
  {
    // The agent moved its issue to Done and completed its turn; the dispatcher saw Done and
    // stopped the run in its next turn (make demo's board).
    name: 'stopped by the dispatcher for Done after a completed turn: IssueCompleted',
    run: run('Done', {
      cancelled: true,
      note: DONE_NOTE,
    }),
    pods: [cancelledPod()],
    steps: runOnce(
      completed(
        "ENG-1 reached Done (a terminal state) after the run's work: 1 turn completed in attempt 1",
        { slots: [`${podName(0)} Failed/Cancelled`] },
      ),
      { logs: [{ slot: 0, completed: true, turns: 1 }] },
    ),
  },
  {
    name: 'stopped for Done while continuing after a successful attempt: IssueCompleted',
    run: run('Done', { cancelled: true, attempt: 2 }),
    pods: [runPod({ phase: 'Succeeded', agent: summary({ turns: 1 }) }), cancelledPod(2)],
    steps: runOnce(
      completed("ENG-1 reached Done (a terminal state) after the run's work: attempt 1 succeeded"),
      { logs: [{ slot: 0, attempt: 2, completed: true }] },
    ),
  },
  {
    name: 'a person moved the issue to Backlog while an attempt ran: Cancelled, saying so',
    run: run('Backlog', { cancelled: true, note: NOTE }),
    pods: [cancelledPod()],
    steps: runOnce(cancelledWith(`cancelled: ${NOTE}`), {
      logs: [{ slot: 0, completed: true, turns: 1 }],
    }),
  },
  {
    // Decided: with no turn completed the run did nothing that could have finished the
    // issue; whoever closed it, the run did not succeed.
    name: 'the issue closed before the run completed any turn: Cancelled, saying so',
    run: run('Done', {
      cancelled: true,
      note: DONE_NOTE,
    }),
    pods: [cancelledPod()],
    steps: runOnce(
      cancelledWith(
        `cancelled: ${DONE_NOTE}; the run had completed no turn, so it did not finish the issue`,
      ),
      { logs: [{ slot: 0, completed: true }] },
    ),
  },
  {
    name: 'a person cancelled the run by hand: Cancelled, spec.cancelRequested',
    run: run('Todo', { cancelled: true }),
    pods: [cancelledPod()],
    steps: runOnce(cancelledWith('cancelled: spec.cancelRequested is true'), {
      logs: [{ slot: 0, completed: true, turns: 1 }],
    }),
  },
  {
    name: 'its attempt failed, the issue terminal: a failure still',
    run: { ...run('Done'), spec: { ...run('Done').spec, continueWhileActive: false } },
    pods: [
      runPod({
        phase: 'Failed',
        agent: summary({ succeeded: false, errorCode: 'hook_failed', error: 'boom' }),
      }),
    ],
    steps: runOnce(runEnded('Failed', Reasons.HookFailed), {
      logs: [{ slot: 0, completed: true }],
    }),
  },
];

describe(`IssueRun reconciler: how ${RUN} ends`, () => {
  it.each(rows)('$name', playRun);
});
