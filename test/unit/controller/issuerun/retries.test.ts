// A failed attempt is tried again by spec.retries, as a new Pod <run>-<slot>-<attempt+1> after the
// backoff of docs/design.md#retries-and-continuation; a cancelled run, a success and a spent budget
// never are.
import { describe, expect, it } from 'vitest';
import { Reasons } from '../../../../src/api/index.js';
import type { PodOutcome } from '../../../../src/controller/issuerun/pod-status.js';
import {
  decideRetry,
  nextAttempt,
  planRetries,
  retryBackoffMs,
  retryable,
} from '../../../../src/controller/issuerun/retry.js';
import type { SlotView } from '../../../../src/controller/issuerun/status.js';
import {
  RUN,
  T0,
  afterLogRead,
  at,
  issueRun,
  playRun,
  podName,
  retryScheduled,
  runActions,
  runConditions,
  runEnded,
  runPod,
  runWrites,
  startedStatus,
  summary,
  workflowText,
  type RunRow,
  type RunStep,
} from '../../../support/fakes/run-table.js';
import { eachCase } from '../../../support/cases.js';

const { progressing } = runConditions;

describe('retry backoff', () => {
  eachCase('after attempt %i with a cap of %i ms: %i ms', retryBackoffMs, [
    [1, 300_000, 10_000],
    [2, 300_000, 20_000],
    [5, 300_000, 160_000],
    [6, 300_000, 300_000],
    [3, 15_000, 15_000],
    [1, 1000, 1000],
    [10_000, 300_000, 300_000],
  ]);
});

const outcome = (phase: PodOutcome['phase'], reason: PodOutcome['reason']): PodOutcome => ({
  phase,
  reason,
  message: 'm',
  finished: phase !== 'Running',
  summary: null,
});

describe('which attempts are retried', () => {
  it.each<[string, Parameters<typeof issueRun>[0], PodOutcome, number, boolean]>([
    [
      'a failure with retries left',
      { spec: { retries: 2 } },
      outcome('Failed', 'HookFailed'),
      2,
      true,
    ],
    [
      'a deleted Pod with retries left',
      { spec: { retries: 1 } },
      outcome('Failed', 'PodDeleted'),
      1,
      true,
    ],
    ['no retries asked for', {}, outcome('Failed', 'HookFailed'), 1, false],
    ['retries spent', { spec: { retries: 2 } }, outcome('Failed', 'HookFailed'), 3, false],
    [
      'retries counted from spec.attempt',
      { spec: { retries: 1, attempt: 4 } },
      outcome('Failed', 'AgentFailed'),
      4,
      true,
    ],
    ['a success', { spec: { retries: 1 } }, outcome('Succeeded', 'Succeeded'), 1, false],
    ['a slot still running', { spec: { retries: 1 } }, outcome('Running', 'Running'), 1, false],
    ['a cancelled slot', { spec: { retries: 1 } }, outcome('Failed', 'Cancelled'), 1, false],
    [
      'a run being cancelled',
      { spec: { retries: 1, cancelRequested: true } },
      outcome('Failed', 'HookFailed'),
      1,
      false,
    ],
  ])('%s: %s', (_name, run, result, attempt, want) => {
    expect(retryable(issueRun(run), result, attempt)).toBe(want);
  });

  it.each<[string, Parameters<typeof issueRun>[0], PodOutcome, number, boolean, string | null]>([
    [
      'a tracker run succeeding with its issue active continues',
      { spec: { continueWhileActive: true } },
      outcome('Succeeded', 'Succeeded'),
      7,
      true,
      'continuation',
    ],
    [
      'a tracker run succeeding with its issue no longer active ends',
      { spec: { continueWhileActive: true } },
      outcome('Succeeded', 'Succeeded'),
      1,
      false,
      null,
    ],
    [
      'a tracker run retries every failure while its issue is active',
      { spec: { continueWhileActive: true } },
      outcome('Failed', 'AgentFailed'),
      40,
      true,
      'retry',
    ],
    [
      'a tracker run failing with its issue inactive ends',
      { spec: { continueWhileActive: true } },
      outcome('Failed', 'AgentFailed'),
      1,
      false,
      null,
    ],
    [
      'a tracker run being cancelled ends',
      { spec: { continueWhileActive: true, cancelRequested: true } },
      outcome('Succeeded', 'Succeeded'),
      1,
      true,
      null,
    ],
    [
      'a hand-made run does not continue after a success',
      {},
      outcome('Succeeded', 'Succeeded'),
      1,
      true,
      null,
    ],
  ])('%s', (_name, run, result, attempt, active, want) => {
    expect(nextAttempt(issueRun(run), result, attempt, active)).toBe(want);
  });

  it('keeps the time its status holds, else waits the backoff from now', () => {
    const base = { attempt: 1, first: 1, capMs: 300_000, now: T0 };
    expect(decideRetry({ ...base, nextAttemptTime: undefined })).toEqual({
      kind: 'wait',
      until: new Date(T0.getTime() + 10_000),
    });
    expect(decideRetry({ ...base, nextAttemptTime: at(3000) })).toEqual({
      kind: 'wait',
      until: new Date(T0.getTime() + 3000),
    });
    expect(decideRetry({ ...base, nextAttemptTime: at(0) })).toEqual({ kind: 'start', attempt: 2 });
  });

  it('plans each slot of an ensemble on its own', () => {
    const run = issueRun({ spec: { retries: 1 } });
    const view = (slot: number, result: PodOutcome): SlotView => ({
      slot,
      attempt: 1,
      podName: podName(slot),
      outcome: result,
    });
    const plan = planRetries(
      run,
      [view(0, outcome('Succeeded', 'Succeeded')), view(1, outcome('Failed', 'OOMKilled'))],
      300_000,
      T0,
    );
    expect(plan.views.map((entry) => entry.outcome?.reason)).toEqual([
      'Succeeded',
      'RetryScheduled',
    ]);
    expect(plan.views[1]?.nextAttemptTime).toBe(at(10_000));
    expect(plan.views[1]?.outcome?.message).toBe(
      `attempt 1 failed (OOMKilled: m); attempt 2 starts at ${at(10_000)}`,
    );
    expect(plan.retrying.map((entry) => entry.slot)).toEqual([1]);
    expect(plan.wakeAt).toBe(T0.getTime() + 10_000);
    expect(plan.due.size).toBe(0);
  });
});

const failed = (attempt: number) =>
  runPod({
    phase: 'Failed',
    attempt,
    agent: summary({ succeeded: false, errorCode: 'hook_failed', error: 'boom' }),
  });
const retrying = issueRun({ spec: { retries: 1 }, status: startedStatus(1, 'Running') });
const attempt2Pod = `POST pods/${podName(0, 2)}`;
/** Attempt 1 ended: attempt 2 is scheduled `reason`, in `ms`. */
const scheduled = (reason: string, ms: number) =>
  runWrites(
    { phase: 'Pending', reason, slots: [`${podName(0)} Pending/${reason}`] },
    { requeueAfter: ms },
  );
/** `ms` later: attempt 2's inputs and Pod are made. */
const attempt2After = (ms: number): RunStep => ({
  advanceMs: ms,
  want: {
    actions: [`POST configmaps/${RUN}-inputs-2`, attempt2Pod, runActions.status],
    status: { slots: [`${podName(0, 2)} Pending/Pending`] },
  },
});

const succeeded = (attempt: number) =>
  runPod({ phase: 'Succeeded', attempt, agent: summary({ succeeded: true }) });
const continuing = (state: string) =>
  issueRun({
    spec: {
      continueWhileActive: true,
      issue: { identifier: 'ENG-1', title: 'Fix the bug', state, labels: [] },
    },
    status: startedStatus(1, 'Running'),
  });

const rows: RunRow[] = [
  {
    name: 'a tracker run that succeeds with its issue still active continues 1 s later as attempt 2',
    run: continuing('Todo'),
    pods: [succeeded(1)],
    steps: [afterLogRead(scheduled(Reasons.ContinuationScheduled, 1000)), attempt2After(1000)],
  },
  {
    name: 'a tracker run that succeeds once its issue left the active states ends Succeeded',
    run: continuing('In Review'),
    pods: [succeeded(1)],
    steps: [afterLogRead(runEnded('Succeeded', 'Succeeded'))],
  },
  {
    name: 'a failed attempt waits out the backoff, then runs as attempt 2; its failure ends the run',
    run: retrying,
    pods: [failed(1)],
    steps: [
      afterLogRead(retryScheduled(10_000)),
      {
        advanceMs: 10_000,
        want: {
          actions: [`POST configmaps/${RUN}-inputs-2`, attempt2Pod, runActions.status],
          status: {
            phase: 'Pending',
            conditions: progressing('Pending'),
            slots: [`${podName(0, 2)} Pending/Pending`],
            inputsConfigMap: `${RUN}-inputs-2`,
          },
          bodies: {
            [attempt2Pod]: { metadata: { labels: { 'lorenz.dev/attempt': '2' } } },
            [`POST configmaps/${RUN}-inputs-2`]: {
              data: { 'prompt-0.md': expect.stringContaining('ENG-1') as unknown },
            },
          },
        },
      },
      {
        advanceMs: 5000,
        pods: [failed(1), runPod({ phase: 'Running', attempt: 2, agent: 'running' })],
        logs: [{ slot: 0, attempt: 2, streaming: true }],
        want: runWrites({
          phase: 'Running',
          conditions: progressing('Running'),
          slots: [`${podName(0, 2)} Running/Running`],
        }),
      },
      {
        pods: [failed(1), failed(2)],
        logs: [{ slot: 0, attempt: 2, completed: true }],
        want: runEnded('Failed', 'HookFailed', { slots: [`${podName(0, 2)} Failed/HookFailed`] }),
      },
    ],
  },
  {
    name: 'a deleted Pod is a failed attempt: retried as the next one, never a second Pod of the same',
    run: issueRun({ spec: { retries: 1 }, status: startedStatus(1, 'Running') }),
    pods: [],
    steps: [
      {
        want: scheduled(Reasons.RetryScheduled, 10_000),
      },
      attempt2After(10_000),
    ],
  },
  {
    name: 'a deleted Pod its node never stops ends its attempt NodeLost 15 s after its grace, retried without waiting for its log',
    run: retrying,
    pods: [runPod({ phase: 'Running', attempt: 1, agent: 'running', deleting: true })],
    steps: [
      {
        logs: [{ slot: 0, streaming: true }],
        want: runWrites(
          { phase: 'Running', slots: [`${podName(0)} Running/Running`] },
          { requeueAfter: 14_000 },
        ),
      },
      {
        advanceMs: 14_000,
        want: scheduled(Reasons.RetryScheduled, 10_000),
      },
    ],
  },
  {
    name: 'the backoff is capped by agent.max_retry_backoff_ms',
    run: retrying,
    snapshot: workflowText({ maxRetryBackoffMs: 2000 }),
    pods: [failed(1)],
    steps: [afterLogRead(runWrites({ reason: Reasons.RetryScheduled }, { requeueAfter: 2000 }))],
  },
  {
    name: 'a failure with no retries asked for ends the run at once',
    run: issueRun({ status: startedStatus(1, 'Running') }),
    pods: [failed(1)],
    steps: [afterLogRead(runEnded('Failed', 'HookFailed'))],
  },
  {
    name: 'a retry waits for the failed attempt’s log to be read whole',
    run: retrying,
    pods: [failed(1)],
    steps: [
      {
        logs: [{ slot: 0, streaming: true }],
        want: { actions: [], result: { requeueAfter: 500 } },
      },
    ],
  },
];

describe('IssueRun reconciler, retries', () => {
  it.each(rows)('$name', playRun);
});
