// A run's verdict, its cancellation and its next attempt wait for the Events of the records
// already read; while a write is still being tried again (the apiserver was away), the
// reconcile requeues instead of holding a worker, and goes on once the writes are in.
import { describe, it } from 'vitest';
import { REQUEUE_MS } from '../../../../src/controller/issuerun/reconciler.js';
import {
  RUN,
  afterLogRead,
  issueRun,
  playRun,
  requeue,
  retryScheduled,
  runEnded,
  runPod,
  startedStatus,
  summary,
  type RunRow,
} from '../../../support/fakes/run-table.js';

/** An Event write that has not come back yet (and, within the row, never does). */
const stillWriting = () => new Promise<void>(() => {});
const waiting = requeue(REQUEUE_MS.eventsPending);

const rows: RunRow[] = [
  {
    name: 'a finished run: no verdict while its Events are being written, then the verdict',
    run: issueRun({ status: startedStatus(1, 'Running') }),
    pods: [runPod({ phase: 'Succeeded', agent: summary() })],
    steps: [
      { logs: [{ slot: 0, completed: true, flushed: stillWriting() }], want: waiting },
      afterLogRead(runEnded('Succeeded', 'Succeeded')),
    ],
  },
  {
    name: 'a cancelled run: Cancelled only once its Events are written',
    run: issueRun({ spec: { cancelRequested: true }, status: startedStatus(1, 'Running') }),
    pods: [runPod({ phase: 'Failed', agent: summary({ succeeded: false, cancelled: true }) })],
    steps: [
      { logs: [{ slot: 0, completed: true, flushed: stillWriting() }], want: waiting },
      afterLogRead(runEnded('Failed', 'Cancelled')),
    ],
  },
  {
    name: 'a failed attempt: its retry is scheduled only once its Events are written',
    run: issueRun({ spec: { retries: 1 }, status: startedStatus(1, 'Running') }),
    pods: [
      runPod({
        phase: 'Failed',
        agent: summary({ succeeded: false, errorCode: 'hook_failed', error: 'boom' }),
      }),
    ],
    steps: [
      { logs: [{ slot: 0, completed: true, flushed: stillWriting() }], want: waiting },
      afterLogRead(retryScheduled(10_000)),
    ],
  },
];

describe(`IssueRun reconciler: ${RUN}'s Events before its verdict`, () => {
  it.each(rows)('$name', playRun);
});
