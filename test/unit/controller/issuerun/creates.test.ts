// What the IssueRun reconciler does when the apiserver refuses what it creates: a refusal
// is on the run at once (a condition with the apiserver's reason and message), retried with
// a growing delay when retrying can help, and the end of the run when it cannot.
import { describe, expect, it } from 'vitest';
import { conflict, failWith } from '../../../support/fakes/controller.js';
import {
  RUN,
  issueRun,
  playRun,
  runActions,
  runConditions,
  runOnce as once,
  runPod,
  slotSummary as slot,
  workflowText,
  type RunRow,
} from '../../../support/fakes/run-table.js';

const { stalled, finished, progressing } = runConditions;
const { status: STATUS, createInputs: CREATE_INPUTS, getInputs: GET_INPUTS } = runActions;
const { createPod: CREATE_POD, getPod: GET_POD, storedInputs } = runActions;

const quota = failWith('POST pods/*', 403, 'Forbidden');
const squatter = {
  match: `GET pods/${RUN}-0-1`,
  answer: { body: { metadata: { name: `${RUN}-0-1`, ownerReferences: [] } } },
};

/**
 * A create the apiserver refuses as invalid (422): retrying cannot help, so the run's Pod is
 * deleted and the run ends with `reason`.
 */
const refusedAsInvalid = (name: string, refused: string, reason: string): RunRow => ({
  name,
  run: issueRun(),
  steps: once(
    {
      actions: [CREATE_INPUTS, CREATE_POD(0), `DELETE pods/${RUN}-0-1`, STATUS],
      status: { phase: 'Failed', conditions: finished(false, reason) },
    },
    { answers: [failWith(refused, 422, 'Invalid')] },
  ),
});

/** The inputs ConfigMap as an earlier IssueRun of the same name left it. */
const predecessorInputs = {
  match: GET_INPUTS,
  answer: {
    body: {
      metadata: {
        name: `${RUN}-inputs`,
        ownerReferences: [
          {
            apiVersion: 'lorenz.dev/v1alpha1',
            kind: 'IssueRun',
            name: RUN,
            uid: 'uid-run-0',
            controller: true,
          },
        ],
      },
    },
  },
};

/** A Pod an earlier IssueRun of the same name left (deleted, not yet collected). */
const earlierRunPod = ((pod) => ({
  ...pod,
  metadata: {
    ...pod.metadata,
    name: 'left-behind',
    ownerReferences: (pod.metadata?.ownerReferences ?? []).map((owner) => ({
      ...owner,
      uid: 'uid-run-0',
    })),
  },
}))(runPod({ phase: 'Succeeded' }));

const rows: RunRow[] = [
  {
    name: 'a Pod refused by a quota: PodCreateFailed at once, retried after 1 s, 2 s, then created',
    run: issueRun(),
    steps: [
      {
        answers: [quota],
        want: {
          actions: [CREATE_INPUTS, CREATE_POD(0), STATUS],
          status: {
            phase: 'Pending',
            reason: 'PodCreateFailed',
            conditions: stalled('PodCreateFailed'),
            message: expect.stringMatching(
              /^the apiserver refused Pod eng-1-0-1 \(403 Forbidden: fake 403\); retrying with backoff$/,
            ) as unknown as string,
          },
          result: { requeueAfter: 1000 },
        },
      },
      {
        advanceMs: 1000,
        // Inputs first now: the run has a status, and they may have been made already.
        answers: [conflict('POST configmaps/*'), storedInputs],
        want: {
          actions: [CREATE_INPUTS, GET_INPUTS, CREATE_POD(0)],
          result: { requeueAfter: 2000 },
        },
      },
      {
        advanceMs: 2000,
        // The quota has room again.
        answers: [{ match: 'POST pods/*', answer: { body: { metadata: {} } } }],
        want: {
          actions: [CREATE_INPUTS, GET_INPUTS, CREATE_POD(0), STATUS],
          status: {
            phase: 'Pending',
            conditions: progressing('Pending'),
            slots: [slot(0, 'Pending/Pending')],
          },
        },
      },
    ],
  },
  refusedAsInvalid(
    'a Pod the apiserver calls invalid: the run ends PodInvalid',
    'POST pods/*',
    'PodInvalid',
  ),
  refusedAsInvalid(
    'inputs refused as invalid beside a created Pod: the Pod is deleted, the run ends',
    'POST configmaps/*',
    'InputsInvalid',
  ),
  {
    name: 'inputs too large for a ConfigMap: InputsTooLarge, nothing created',
    // Each prompt within the parse limit (262 144 characters), five of them past 1 MB.
    run: issueRun({ labels: ['ensemble:5'] }),
    snapshot: workflowText({ prompt: `${'x'.repeat(250_000)} {{ issue.identifier }}` }),
    steps: once({
      actions: [STATUS],
      status: {
        phase: 'Failed',
        conditions: finished(false, 'InputsTooLarge'),
        message: expect.stringMatching(
          /the rendered inputs \(WORKFLOW.md, the issue, 5 prompt\(s\)\) take \d+ bytes; a ConfigMap holds at most 1000000/,
        ) as unknown as string,
      },
    }),
  },
  {
    name: 'a Pod squatting on the run Pod name: NameConflict, and how to clear it',
    run: issueRun(),
    steps: [
      {
        answers: [conflict('POST pods/*'), squatter],
        want: {
          actions: [CREATE_INPUTS, CREATE_POD(0), GET_POD(0), STATUS],
          status: {
            conditions: stalled('NameConflict'),
            message: expect.stringContaining(
              `Pod ${RUN}-0-1 exists and is not this IssueRun's (not owned by uid uid-run-1); the run waits until it is gone: kubectl delete pod ${RUN}-0-1 -n ns`,
            ) as unknown as string,
          },
          result: { requeueAfter: 1000 },
        },
      },
    ],
  },
  {
    name: 'inputs left by a deleted IssueRun of the same name: NameConflict, looked at again at least every 5 s',
    run: issueRun({ status: { phase: 'Pending' } }),
    steps: [1000, 2000, 4000, 5000, 5000].map((requeueAfter, index) => ({
      ...(index > 0 ? { advanceMs: requeueAfter } : {}),
      answers: [conflict('POST configmaps/*'), predecessorInputs],
      want: {
        actions: [CREATE_INPUTS, GET_INPUTS, ...(index === 0 ? [STATUS] : [])],
        ...(index === 0
          ? {
              status: {
                conditions: stalled('NameConflict'),
                message: expect.stringContaining(
                  `ConfigMap ${RUN}-inputs is still held by an earlier IssueRun ${RUN} (uid uid-run-0), which was deleted; the run waits until the garbage collector has removed it`,
                ) as unknown as string,
              },
            }
          : {}),
        result: { requeueAfter },
      },
    })),
  },
  {
    name: 'first pass, an earlier run of the name not yet collected: inputs before Pods, no Pod beside what it left',
    run: issueRun(),
    pods: [earlierRunPod],
    steps: once(
      {
        actions: [CREATE_INPUTS, GET_INPUTS, STATUS],
        status: { conditions: stalled('NameConflict') },
        result: { requeueAfter: 1000 },
      },
      { answers: [conflict('POST configmaps/*'), predecessorInputs] },
    ),
  },
  {
    name: 'first pass, an earlier run of the name not yet collected, its inputs gone: inputs, then Pods',
    run: issueRun(),
    pods: [earlierRunPod],
    steps: once({ actions: [CREATE_INPUTS, CREATE_POD(0), STATUS], status: { phase: 'Pending' } }),
  },
  {
    name: 'an inputs ConfigMap squatting on the run name is never read as the run inputs',
    // Seen before (a status), inputs not recorded yet: they are created first.
    run: issueRun({ status: { phase: 'Pending' } }),
    steps: once(
      {
        actions: [CREATE_INPUTS, GET_INPUTS, STATUS],
        status: { conditions: stalled('NameConflict') },
        result: { requeueAfter: 1000 },
      },
      {
        answers: [
          conflict('POST configmaps/*'),
          { match: GET_INPUTS, answer: { body: { metadata: { name: `${RUN}-inputs` } } } },
        ],
      },
    ),
  },
  {
    name: 'a transient apiserver error is the work queue’s to retry, with no status',
    run: issueRun(),
    steps: once(
      { actions: [CREATE_INPUTS, CREATE_POD(0)], error: /503/ },
      {
        answers: [failWith('POST pods/*', 503)],
      },
    ),
  },
];

describe('IssueRun reconciler, refused creates', () => {
  it.each(rows)('$name', playRun);
});
