// Runs handed to Kueue (spec.queueName, docs/queues.md): no Pod before the LocalQueue is
// known to exist, Pods that carry the queue (an ensemble as one Pod group), a queued slot
// that says what Kueue says and never times out, and a preempted attempt that fails as such.
import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { Reasons, type IssueRun } from '../../../../src/api/index.js';
import {
  attemptQueue,
  kueueMetadata,
  newlyPreempted,
} from '../../../../src/controller/issuerun/kueue.js';
import { workloadWaitMessage } from '../../../../src/controller/issuerun/kueue-queues.js';
import { mapPodStatus } from '../../../../src/controller/issuerun/pod-status.js';
import { deletedSlots } from '../../../../src/controller/issuerun/slot-views.js';
import type { PodObject } from '../../../../src/controller/shared/resources.js';
import { FakeLogFollowers } from '../../../support/fakes/controller.js';
import * as fake from '../../../support/fakes/run-table.js';

const GET_QUEUE = 'GET localqueues/team-q';
const LIST_WORKLOADS = 'GET workloads';
const queued = fake.workflow({ queueName: 'team-q' });
const missingQueue = {
  match: GET_QUEUE,
  answer: {
    status: 404,
    reason: 'NotFound',
    details: { name: 'team-q', group: 'kueue.x-k8s.io', kind: 'localqueues' },
  },
};
const queueFound = { match: GET_QUEUE, answer: { body: { metadata: { name: 'team-q' } } } };

/** A run Pod as Kueue's webhook leaves it: labelled with the queue, gated until admitted. */
function gatedPod(createdAgoMs: number): PodObject {
  const pod = fake.runPod({ phase: 'Pending', createdAgoMs });
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      labels: { ...pod.metadata?.labels, 'kueue.x-k8s.io/queue-name': 'team-q' },
    },
    spec: { containers: [], schedulingGates: [{ name: 'kueue.x-k8s.io/admission' }] },
    status: {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
    },
  };
}

/** A running run Pod Kueue is stopping to preempt it (phase as given). */
function preemptedPod(phase: 'Running' | 'Failed'): PodObject {
  const pod = fake.runPod({ phase, agent: 'running', deleting: true });
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      labels: { ...pod.metadata?.labels, 'kueue.x-k8s.io/queue-name': 'team-q' },
    },
    status: {
      ...pod.status,
      phase,
      conditions: [
        {
          type: 'TerminationTarget',
          status: 'True',
          reason: 'WorkloadEvictedDueToPreempted',
          message:
            'Preempted to accommodate a workload (UID: w-2, JobUID: j-2) due to reclamation within the cohort',
        },
      ],
    },
  };
}

const rows: fake.RunRow[] = [
  {
    name: 'Kueue is not installed (its API is not served): Stalled KueueNotInstalled, no Pod, looked at again in 10 s',
    run: fake.issueRun(),
    workflow: queued,
    steps: fake.runOnce(
      fake.heldStalled(
        Reasons.KueueNotInstalled,
        'spec.queueName of Workflow wf is team-q, but Kueue is not installed: kueue.x-k8s.io/v1beta2 localqueues is not served by this cluster; no Pod is made until it is (or spec.queueName is removed)',
        [GET_QUEUE],
        10_000,
      ),
    ),
  },
  {
    name: 'the LocalQueue does not exist: Stalled LocalQueueNotFound; once it does, the Pod is made',
    run: fake.issueRun(),
    workflow: queued,
    steps: [
      {
        answers: [missingQueue],
        want: fake.heldStalled(
          Reasons.LocalQueueNotFound,
          'waiting for LocalQueue team-q in namespace ns (spec.queueName of Workflow wf): not found; no Pod is made until it exists',
          [GET_QUEUE],
          10_000,
        ),
      },
      {
        advanceMs: 10_000,
        answers: [queueFound],
        want: {
          actions: [GET_QUEUE, fake.CREATE_INPUTS, fake.CREATE_POD(0), fake.STATUS],
          status: { phase: 'Pending', slots: [`${fake.podName(0)} Pending/Pending`] },
        },
      },
    ],
  },
  {
    name: "the run's own spec.queueName is the one looked up, in place of its Workflow's",
    run: fake.issueRun({ spec: { queueName: 'own-q' } }),
    workflow: queued,
    steps: fake.runOnce({
      actions: ['GET localqueues/own-q', fake.STATUS],
      status: { reason: Reasons.KueueNotInstalled },
      result: { requeueAfter: 10_000 },
    }),
  },
  {
    name: "a queued slot says Kueue's reason, read from its Workload, and is looked at again in 15 s",
    run: fake.issueRun({ status: fake.startedStatus() }),
    workflow: queued,
    pods: [gatedPod(3_600_000)],
    steps: [
      {
        answers: [
          {
            match: LIST_WORKLOADS,
            answer: {
              body: {
                items: [
                  {
                    status: {
                      conditions: [
                        {
                          type: 'QuotaReserved',
                          status: 'False',
                          reason: 'Pending',
                          message: 'insufficient quota for cpu in flavor default, 100m more needed',
                        },
                      ],
                    },
                  },
                ],
              },
            },
          },
        ],
        want: {
          actions: [LIST_WORKLOADS, fake.STATUS],
          status: {
            phase: 'Pending',
            reason: Reasons.Queued,
            message:
              'queued in LocalQueue team-q: insufficient quota for cpu in flavor default, 100m more needed',
            conditions: fake.runConditions.progressing(Reasons.Queued),
            slots: [fake.slotSummary(0, 'Pending/Queued')],
          },
          result: { requeueAfter: 15_000 },
        },
      },
    ],
  },
  {
    name: 'a slot Kueue is preempting is written at once (its Pod goes next); stopped, it failed Preempted',
    run: fake.issueRun({ status: fake.startedStatus(1, 'Running') }),
    workflow: queued,
    pods: [preemptedPod('Running')],
    steps: [
      {
        want: {
          actions: [fake.STATUS],
          status: { slots: [fake.slotSummary(0, 'Running/Preempted')] },
          // When a Pod that is being deleted counts as stranded, if it is still there.
          result: { requeueAfter: 14_000 },
        },
      },
      {
        pods: [preemptedPod('Failed')],
        logs: [{ slot: 0, completed: true }],
        want: fake.runEnded('Failed', Reasons.Preempted, {
          slots: [fake.slotSummary(0, 'Failed/Preempted')],
        }),
      },
    ],
  },
];

describe('IssueRun reconciler: runs queued by Kueue', () => {
  it.each(rows)('$name', (row) => fake.playRun(row));
});

describe('run Pods handed to Kueue', () => {
  const run = { name: fake.RUN, namespace: 'ns', uid: 'abcdef12-0000' };
  const withQueue = (spec: Partial<IssueRun['spec']> = {}) => fake.issueRun({ spec });

  it.each([
    { what: 'no queue named: nothing', slots: [0], queue: undefined, want: undefined },
    { what: 'one Pod: the queue alone', slots: [0], queue: 'team-q', want: { name: 'team-q' } },
    {
      what: 'an ensemble: one Pod group of all its slots',
      slots: [0, 1, 2],
      queue: 'team-q',
      want: { name: 'team-q', group: { name: `${fake.RUN}-abcdef12-1-0`, totalCount: 3 } },
    },
    {
      what: 'two slots retried together: a group named by the first of them',
      slots: [2, 1],
      queue: 'team-q',
      want: { name: 'team-q', group: { name: `${fake.RUN}-abcdef12-1-1`, totalCount: 2 } },
    },
  ])('$what', ({ slots, queue, want }) => {
    const chosen = attemptQueue(
      withQueue(),
      fake.workflow(queue === undefined ? {} : { queueName: queue }),
      run,
      1,
      slots.map((entry) => ({ slot: entry })),
    );
    expect(chosen).toEqual(want);
  });

  it('labels a grouped Pod with the group, its size, and no waiting for a failed member', () => {
    expect(kueueMetadata({ name: 'q', group: { name: 'g', totalCount: 2 } })).toEqual({
      labels: { 'kueue.x-k8s.io/queue-name': 'q', 'kueue.x-k8s.io/pod-group-name': 'g' },
      annotations: {
        'kueue.x-k8s.io/pod-group-total-count': '2',
        'kueue.x-k8s.io/retriable-in-group': 'false',
      },
    });
    expect(kueueMetadata(undefined)).toEqual({ labels: {}, annotations: {} });
  });
});

describe('slots of Pods Kueue holds or stops', () => {
  const options = (now: number) => ({
    now: new Date(now),
    imagePullGraceMs: 60_000,
    pendingTimeoutMs: 300_000,
  });

  it('a gated Pod is Queued however long it waits: no start timeout runs in the queue', () => {
    const pod = gatedPod(3_600_000);
    const created = new Date(pod.metadata?.creationTimestamp ?? 0).getTime();
    expect(mapPodStatus(pod, options(created + 3_600_000))).toMatchObject({
      phase: 'Pending',
      reason: 'Queued',
      finished: false,
      message: 'queued in LocalQueue team-q: waiting for Kueue to admit the Pod',
    });
  });

  it('once admitted, a start timeout counts from the admission, not from the creation', () => {
    const pod = gatedPod(0);
    const created = new Date(pod.metadata?.creationTimestamp ?? 0).getTime();
    const admitted = created + 3_600_000;
    // Admitted an hour after its creation; then its image cannot be pulled.
    const unpulled = fake.runPod({ phase: 'Pending', waitingReason: 'ErrImagePull' });
    const waiting: V1Pod = {
      ...pod,
      spec: { containers: [] },
      status: {
        ...unpulled.status,
        conditions: [
          { type: 'PodScheduled', status: 'True', lastTransitionTime: new Date(admitted) },
        ],
      },
    };
    expect(mapPodStatus(waiting, options(admitted + 30_000))).toMatchObject({ finished: false });
    expect(mapPodStatus(waiting, options(admitted + 61_000))).toMatchObject({
      finished: true,
      reason: 'ImagePullFailed',
    });
  });

  it.each([
    {
      what: 'preempted, still stopping: Running/Preempted, not finished',
      phase: 'Running' as const,
      want: { phase: 'Running', reason: 'Preempted', finished: false },
    },
    {
      what: 'preempted and stopped: Failed/Preempted, with what Kueue said',
      phase: 'Failed' as const,
      want: {
        phase: 'Failed',
        reason: 'Preempted',
        finished: true,
        message:
          'Kueue stopped the attempt (WorkloadEvictedDueToPreempted): Preempted to accommodate a workload (UID: w-2, JobUID: j-2) due to reclamation within the cohort',
      },
    },
  ])('$what', ({ phase, want }) => {
    expect(mapPodStatus(preemptedPod(phase), options(fake.T0.getTime()))).toMatchObject(want);
  });

  it('an eviction other than a preemption is PodEvicted', () => {
    const pod = preemptedPod('Failed');
    const [condition] = pod.status?.conditions ?? [];
    if (condition) {
      condition.reason = 'WorkloadEvictedDueToClusterQueueStopped';
      condition.message = 'The ClusterQueue is stopped';
    }
    expect(mapPodStatus(pod, options(fake.T0.getTime()))).toMatchObject({ reason: 'PodEvicted' });
  });

  it('a preempted Pod gone before it was seen stopped fails Preempted, not PodDeleted', () => {
    const status = fake.startedStatus(1, 'Running');
    const [first] = status.slots ?? [];
    if (first) Object.assign(first, { reason: 'Preempted', message: 'Kueue stopped the attempt' });
    const [view] = deletedSlots(fake.issueRun({ status }), [], new FakeLogFollowers());
    expect(view?.outcome).toMatchObject({ phase: 'Failed', reason: 'Preempted', finished: true });
  });

  it('a preemption is news only until the status records it', () => {
    const views = [{ slot: 0, outcome: { reason: 'Preempted', finished: false } }];
    expect(newlyPreempted(fake.issueRun({ status: fake.startedStatus(1, 'Running') }), views)).toBe(
      true,
    );
    const recorded = fake.startedStatus(1, 'Running');
    const [first] = recorded.slots ?? [];
    if (first) first.reason = 'Preempted';
    expect(newlyPreempted(fake.issueRun({ status: recorded }), views)).toBe(false);
  });

  it.each([
    {
      what: 'no quota reserved: why not',
      conditions: [{ type: 'QuotaReserved', status: 'False', message: 'insufficient quota' }],
      want: 'insufficient quota',
    },
    {
      what: 'quota reserved, admission checks pending: why not admitted',
      conditions: [
        { type: 'QuotaReserved', status: 'True', message: 'Quota reserved' },
        { type: 'Admitted', status: 'False', message: 'waiting for admission checks' },
      ],
      want: 'waiting for admission checks',
    },
    { what: 'no conditions yet: nothing', conditions: [], want: undefined },
  ])("Kueue's words on a Workload: $what", ({ conditions, want }) => {
    expect(workloadWaitMessage(conditions)).toBe(want);
  });
});
