// A run Pod is known by its uid and by what it says, not by a status someone else wrote:
// a deleted Pod is a failed attempt (never a second Pod for the same attempt, never a
// cancellation nobody asked for), and a hand-written Finished does not stop the following.
import { describe, it } from 'vitest';
import {
  finishedStatus,
  issueRun,
  playRun,
  podName,
  runConditions,
  runEnded,
  runOnce as once,
  runPod,
  runWrites as writes,
  slotSummary as slot,
  startedStatus,
  summary,
  type RunRow,
} from '../../../support/fakes/run-table.js';

const { progressing } = runConditions;
const stoppedByDeletion = runPod({
  phase: 'Failed',
  deleting: true,
  agent: summary({ succeeded: false, cancelled: true, errorCode: 'cancelled', error: 'stopped' }),
});
const running = runPod({ phase: 'Running', agent: 'running' });

const rows: RunRow[] = [
  {
    name: 'a Pod deleted by hand whose runner stopped: PodDeleted, not Cancelled',
    run: issueRun({ status: startedStatus(1, 'Running') }),
    pods: [stoppedByDeletion],
    steps: once(runEnded('Failed', 'PodDeleted', { slots: [slot(0, 'Failed/PodDeleted')] }), {
      logs: [{ slot: 0, completed: true }],
      forgotten: [podName(0)],
    }),
  },
  {
    name: 'a Pod gone from the cache long after it was created: PodDeleted, no second Pod',
    run: issueRun({ status: startedStatus(1, 'Running') }),
    pods: [],
    steps: once(runEnded('Failed', 'PodDeleted', { slots: [slot(0, 'Failed/PodDeleted')] })),
  },
  {
    name: 'a status patched to Finished by hand while the Pod runs: followed on, put right',
    run: issueRun({
      status: { ...finishedStatus(1000), slots: startedStatus(1, 'Running').slots },
    }),
    pods: [running],
    steps: once(
      writes({
        phase: 'Running',
        conditions: progressing('Running'),
        slots: [slot(0, 'Running/Running')],
      }),
    ),
  },
  {
    name: 'a hand-patched Finished and a Pod that has since ended: its real end is written',
    run: issueRun({
      status: { ...finishedStatus(1000), slots: startedStatus(1, 'Running').slots },
    }),
    pods: [
      runPod({
        phase: 'Failed',
        agent: summary({ succeeded: false, errorCode: 'hook_failed', error: 'boom' }),
      }),
    ],
    steps: once(runEnded('Failed', 'HookFailed', { slots: [slot(0, 'Failed/HookFailed')] }), {
      logs: [{ slot: 0, completed: true }],
    }),
  },
  {
    name: 'a run deleted mid-run: the logs of its Pods are dropped with it',
    run: issueRun({ status: startedStatus(1, 'Running') }),
    pods: [running],
    steps: [
      {
        logs: [{ slot: 0, streaming: true }],
        want: writes({ phase: 'Running', slots: [slot(0, 'Running/Running')] }),
      },
      { run: null, want: { actions: [] }, forgotten: [podName(0)] },
    ],
  },
];

describe('IssueRun reconciler, run Pods by uid', () => {
  it.each(rows)('$name', playRun);
});
