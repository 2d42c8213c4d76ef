// Table-driven tests of the IssueRun reconciler (cert-manager style): each row puts objects
// in fake caches, runs one or more reconciles, and checks the API requests each made, the
// status it wrote and the result it returned (see fakes/tables.ts).
import { describe, expect, it } from 'vitest';
import { failWith } from '../../../support/fakes/controller.js';
import {
  CREATE_INPUTS,
  CREATE_POD,
  RUN,
  RUN_OPTIONS,
  STATUS,
  afterLogRead,
  at,
  finishedStatus,
  issueRun,
  nothing,
  playRun,
  podName,
  requeue,
  runConditions,
  runOnce as once,
  runPod,
  runWrites as writes,
  sha256,
  slotSummary as slot,
  startedStatus,
  summary,
  workflow,
  workflowText,
  type RunRow,
  type RunSummary,
  type Want,
} from '../../../support/fakes/run-table.js';

const { progressing, stalled, finished } = runConditions;

const fresh: Want<RunSummary> = {
  actions: [CREATE_INPUTS, CREATE_POD(0), STATUS],
  status: {
    phase: 'Pending',
    reason: 'Pending',
    conditions: progressing('Pending'),
    slots: [slot(0, 'Pending/Pending')],
    inputsConfigMap: `${RUN}-inputs`,
    configDigest: `sha256:${sha256(workflowText())}`,
    startTime: at(0),
    completionTime: undefined,
  },
};
const running = runPod({ phase: 'Running', agent: 'running' });
const started = (slots = 1) => issueRun({ status: startedStatus(slots, 'Running') });
const cancelled = issueRun({
  spec: { cancelRequested: true },
  status: startedStatus(1, 'Running'),
});
const done = issueRun({ status: finishedStatus(60_000) });
const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
const succeededPod = runPod({
  phase: 'Succeeded',
  agent: summary({
    turns: 3,
    usage,
    trail: [{ seq: 0, name: 'after_create', status: 'completed', exitCode: 0, durationMs: 4 }],
    records: 1,
  }),
});

/** Runs that end before any Pod: the reason, and what makes it so. */
const endsBeforeAnyPod: Array<[string, string, Partial<RunRow>]> = [
  [
    'TemplateError',
    'a prompt that fails to render',
    { snapshot: workflowText({ prompt: '{{ nobody }}' }) },
  ],
  [
    'InputsInvalid',
    'an issue without an identifier',
    { run: issueRun({ spec: { issue: { identifier: '', title: 't' } } }) },
  ],
  [
    'WorkflowInvalid',
    'a podTemplate the pod builder refuses',
    { workflow: workflow({ podTemplate: { spec: { containers: [{ name: 'agent' }] } } }) },
  ],
];

const rows: RunRow[] = [
  { name: 'run gone from the cache: nothing', steps: once(nothing) },
  {
    name: 'run being deleted: nothing, not even to its Pods',
    run: issueRun({ deleting: true, status: startedStatus(1, 'Running') }),
    pods: [running],
    steps: once(nothing),
  },
  {
    name: 'finished, ttlSecondsAfterFinished elapsed: the IssueRun is deleted',
    run: done,
    workflow: workflow({ ttlSecondsAfterFinished: 30 }),
    steps: once({
      actions: [`DELETE issueruns/${RUN}`],
      bodies: { [`DELETE issueruns/${RUN}`]: { propagationPolicy: 'Foreground' } },
    }),
  },
  {
    name: 'finished, TTL 0, the IssueRun already gone (404): no error',
    run: done,
    workflow: workflow({ ttlSecondsAfterFinished: 0 }),
    steps: once(
      { actions: [`DELETE issueruns/${RUN}`] },
      { answers: [failWith('DELETE issueruns/*', 404)] },
    ),
  },
  {
    name: 'finished, TTL not yet elapsed: requeued for the rest of it',
    run: done,
    workflow: workflow({ ttlSecondsAfterFinished: 300 }),
    steps: once(requeue(240_000)),
  },
  {
    name: 'finished without a TTL: kept, nothing to do',
    run: done,
    pods: [runPod({ phase: 'Succeeded' })],
    steps: once(nothing),
  },
  {
    name: 'cancelRequested with a running Pod: the Pod is deleted, the run requeued',
    run: cancelled,
    pods: [running],
    steps: once({ actions: [`DELETE pods/${podName(0)}`], result: { requeueAfter: 1000 } }),
  },
  {
    name: 'cancelRequested, the Pod already terminating: no second DELETE',
    run: cancelled,
    pods: [runPod({ phase: 'Running', agent: 'running', deleting: true })],
    steps: once(requeue(1000)),
  },
  {
    name: 'cancelRequested, the Pod vanished before its DELETE (404): no error',
    run: cancelled,
    pods: [runPod({ phase: 'Pending' })],
    steps: once(
      { actions: [`DELETE pods/${podName(0)}`], result: { requeueAfter: 1000 } },
      { answers: [failWith('DELETE pods/*', 404)] },
    ),
  },
  {
    name: 'cancelRequested, no live Pod: Cancelled, the log state dropped',
    run: cancelled,
    pods: [runPod({ phase: 'Failed', agent: summary({ succeeded: false, cancelled: true }) })],
    steps: once(
      writes({
        phase: 'Failed',
        reason: 'Cancelled',
        conditions: finished(false, 'Cancelled'),
        slots: [slot(0, 'Failed/Cancelled')],
        completionTime: at(0),
      }),
      { logs: [{ slot: 0, completed: true }], forgotten: [podName(0)] },
    ),
  },
  {
    name: 'cancelRequested, the Pod deleted already: its slot kept from the log read',
    run: cancelled,
    steps: once(
      writes({
        phase: 'Failed',
        reason: 'Cancelled',
        slots: [slot(0, 'Failed/Cancelled')],
        turn: 2,
      }),
      { logs: [{ slot: 0, drained: true, turns: 2 }], forgotten: [podName(0)] },
    ),
  },
  {
    // The request wins over a verdict not written yet (worth a second look: the work is done).
    name: 'cancelRequested after the Pod succeeded, before the verdict was written: Cancelled',
    run: cancelled,
    pods: [runPod({ phase: 'Succeeded' })],
    steps: once(
      writes({
        phase: 'Failed',
        conditions: finished(false, 'Cancelled'),
        slots: [slot(0, 'Succeeded/Succeeded')],
      }),
    ),
  },
  {
    name: 'cancelRequested before anything started: Cancelled without slots',
    run: issueRun({ spec: { cancelRequested: true } }),
    steps: once(writes({ phase: 'Failed', conditions: finished(false, 'Cancelled'), slots: [] })),
  },
  {
    name: 'Workflow missing: stalled WorkflowNotFound',
    run: issueRun(),
    workflow: null,
    steps: once(
      writes({
        phase: 'Pending',
        reason: 'WorkflowNotFound',
        conditions: stalled('WorkflowNotFound'),
      }),
    ),
  },
  {
    name: 'Workflow suspended: Pending WorkflowSuspended, nothing created',
    run: issueRun(),
    workflow: workflow({ suspend: true }),
    steps: once(
      writes({
        phase: 'Pending',
        reason: 'WorkflowSuspended',
        conditions: progressing('WorkflowSuspended'),
      }),
    ),
  },
  {
    name: 'Workflow without a valid config (no lastGoodConfigMap): stalled WorkflowInvalid',
    run: issueRun(),
    workflow: workflow({}, { message: 'ConfigMap wf-source not found' }),
    steps: once(
      writes({
        phase: 'Pending',
        message: expect.stringContaining('ConfigMap wf-source not found'),
        conditions: stalled('WorkflowInvalid'),
      }),
    ),
  },
  ...endsBeforeAnyPod.map(([reason, what, given]): RunRow => ({
    name: `${what}: finished ${reason}, nothing created`,
    run: issueRun(),
    ...given,
    steps: once(
      writes({
        phase: 'Failed',
        reason,
        conditions: finished(false, reason),
        completionTime: at(0),
        // It never started: no duration.
        duration: undefined,
        slots: [],
      }),
    ),
  })),
  {
    name: 'fresh run: inputs ConfigMap and Pod created',
    run: issueRun(),
    steps: once(fresh, {
      podAnnotations: {
        'lorenz.dev/issue-state': 'Todo',
        'lorenz.dev/inputs-digest': expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      },
    }),
  },
  {
    // The start says what the Pod in the cache will say: its arrival is not a second write.
    name: 'fresh run, then its Pod in the cache: nothing more to write',
    run: issueRun(),
    steps: [{ want: fresh }, { pods: [runPod({ phase: 'Pending' })], want: nothing }],
  },
  {
    name: 'fresh ensemble of 2: one Pod per slot',
    run: issueRun({ labels: ['ensemble:2'] }),
    steps: once({
      actions: [CREATE_INPUTS, CREATE_POD(0), CREATE_POD(1), STATUS],
      status: { phase: 'Pending', slots: [slot(0, 'Pending/Pending'), slot(1, 'Pending/Pending')] },
    }),
  },
  {
    name: 'Pods created but not in the cache yet: no second create; past the expectation, deleted',
    run: issueRun(),
    steps: [
      { want: fresh },
      { advanceMs: 200, want: requeue(1000) },
      {
        // 30 s on and the Pod still unseen: it was deleted. A Pod is never created twice for
        // one attempt; the attempt failed.
        advanceMs: 30_000,
        want: writes({
          phase: 'Failed',
          conditions: finished(false, 'PodDeleted'),
          slots: [slot(0, 'Failed/PodDeleted')],
        }),
      },
    ],
  },
  {
    name: 'a Pod of a started ensemble deleted: that slot failed PodDeleted, the other runs on',
    run: issueRun({ labels: ['ensemble:2'], status: startedStatus(2, 'Running') }),
    pods: [running],
    steps: once(
      writes({
        phase: 'Running',
        slots: [slot(0, 'Running/Running'), slot(1, 'Failed/PodDeleted')],
      }),
    ),
  },
  {
    name: 'the first Running is written at once, later progress waits out the interval, the end goes at once',
    run: issueRun({ status: startedStatus() }),
    steps: [
      {
        pods: [runPod({ phase: 'Pending' })],
        want: writes({ phase: 'Pending', message: 'the Pod is starting' }),
      },
      // 1.5 s after the last write, inside the interval: Running is not held back.
      {
        advanceMs: 1500,
        pods: [running],
        want: writes({ phase: 'Running', conditions: progressing('Running') }),
      },
      // A turn later: progress, which waits out the interval.
      {
        advanceMs: 500,
        logs: [{ slot: 0, turns: 1 }],
        want: requeue(RUN_OPTIONS.progressIntervalMs - 500),
      },
      {
        advanceMs: RUN_OPTIONS.progressIntervalMs - 500,
        want: writes({ phase: 'Running', turn: 1 }),
      },
      // Nothing new: nothing written, though the cache still lags the last write.
      { advanceMs: 500, want: nothing },
      {
        // 1.5 s after the last write, well inside the interval: the end goes at once.
        advanceMs: 1000,
        pods: [succeededPod],
        logs: [{ slot: 0, completed: true, turns: 3 }],
        forgotten: [podName(0)],
        want: writes({
          phase: 'Succeeded',
          reason: 'Succeeded',
          conditions: finished(true, 'Succeeded'),
          slots: [slot(0, 'Succeeded/Succeeded')],
          turn: 3,
          usage,
          startTime: at(-60_000),
          completionTime: at(7000),
          // Written once at the end: the Duration column (kubectl cannot subtract times).
          duration: '1m7s',
        }),
      },
      // Finished: left alone (no TTL), however stale the cache.
      { advanceMs: 60_000, want: nothing },
    ],
  },
  {
    // The controller died after the Pod's create and before the status that records it; the
    // Pod ran to its end meanwhile. Its hook records and Events are in its log: the run is
    // recorded as running and ends through the log read, never from the Pod phase alone.
    name: 'a fresh run whose Pod already ended: recorded running, then ended from its log',
    run: issueRun(),
    pods: [runPod({ phase: 'Succeeded', agent: summary() })],
    steps: [
      {
        want: {
          actions: [CREATE_INPUTS, STATUS],
          status: { phase: 'Running', slots: [slot(0, 'Running/Running')] },
          result: { requeueAfter: 0 },
        },
      },
      { want: requeue(500) },
      afterLogRead(writes({ phase: 'Succeeded', conditions: finished(true, 'Succeeded') })),
    ],
  },
  {
    name: 'Pod finished but its log still being read: the verdict waits',
    run: started(),
    pods: [runPod({ phase: 'Succeeded', agent: summary() })],
    steps: once(requeue(500)),
  },
  {
    name: 'Pod failed in a hook: finished HookFailed',
    run: started(),
    pods: [
      runPod({
        phase: 'Failed',
        agent: summary({
          succeeded: false,
          errorCode: 'hook_failed',
          error: 'before_run exited 2',
        }),
      }),
    ],
    steps: once(
      writes({
        phase: 'Failed',
        message: 'before_run exited 2',
        conditions: finished(false, 'HookFailed'),
      }),
      { logs: [{ slot: 0, drained: true }] },
    ),
  },
  {
    name: 'ensemble: one slot failed, the other succeeded: Succeeded',
    run: started(2),
    pods: [runPod({ slot: 0, phase: 'Failed' }), runPod({ slot: 1, phase: 'Succeeded' })],
    steps: once(
      writes({
        phase: 'Succeeded',
        conditions: finished(true, 'Succeeded'),
        slots: [slot(0, 'Failed/PodFailed'), slot(1, 'Succeeded/Succeeded')],
      }),
    ),
  },
  {
    name: 'image pull failing: Pending through its grace, rechecked at its end, then finished',
    run: issueRun({ status: startedStatus() }),
    pods: [runPod({ phase: 'Pending', waitingReason: 'ErrImagePull', createdAgoMs: 20_000 })],
    steps: [
      {
        want: writes(
          { phase: 'Pending', message: 'container agent: ErrImagePull: boom' },
          { requeueAfter: RUN_OPTIONS.podStatus.imagePullGraceMs - 20_000 },
        ),
      },
      {
        advanceMs: RUN_OPTIONS.podStatus.imagePullGraceMs - 20_000,
        want: writes({ phase: 'Failed', conditions: finished(false, 'ImagePullFailed') }),
      },
    ],
  },
  ...[undefined, 500].map((failure): RunRow => ({
    name: `issue state changed: the Pod annotation follows${failure ? ' (a failure is only logged)' : ''}`,
    run: issueRun({
      spec: { issue: { identifier: 'ENG-1', title: 't', state: 'Done' } },
      status: startedStatus(1, 'Running'),
    }),
    pods: [running],
    steps: once(
      {
        actions: [`PATCH pods/${podName(0)}`, STATUS],
        bodies: {
          [`PATCH pods/${podName(0)}`]: {
            metadata: { annotations: { 'lorenz.dev/issue-state': 'Done' } },
          },
        },
        status: { phase: 'Running' },
      },
      { answers: failure ? [failWith('PATCH pods/*', failure)] : [] },
    ),
  })),
];

describe('IssueRun reconciler', () => {
  it.each(rows)('$name', playRun);

  // Regression: the "expected Pods" memory was keyed by namespace/name, so a run deleted and
  // re-created under the same name within 30 s waited on Pods it never owned. It is keyed
  // by the run's uid now.
  it('starts a run re-created under the same name at once', () =>
    playRun({
      name: 're-created under the same name',
      run: issueRun(),
      steps: [
        { want: fresh },
        { advanceMs: 1000, run: null, want: nothing },
        {
          advanceMs: 1000,
          run: issueRun({ uid: 'uid-run-2' }),
          want: { ...fresh, status: { ...fresh.status, startTime: at(2000) } },
        },
      ],
    }));
});
