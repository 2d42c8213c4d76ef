// A Workflow whose workspace claim template names a StorageClass: the class is looked up
// before the first claim, so a run never waits on a claim that can only stay Pending with
// nothing on the IssueRun to say why.
import { describe, it } from 'vitest';
import { Reasons } from '../../../../src/api/index.js';
import { failWith } from '../../../support/fakes/controller.js';
import {
  CREATE_CLAIM,
  CREATE_INPUTS,
  CREATE_POD,
  GET_CLASS,
  RUN,
  STATUS,
  claimedWorkspace,
  issueRun,
  playRun,
  podName,
  runConditions,
  workflow,
  type RunRow,
} from '../../../support/fakes/run-table.js';

const claimed = (storageClassName: string) => workflow(claimedWorkspace(storageClassName));

const created = {
  actions: [CREATE_INPUTS, CREATE_CLAIM, CREATE_POD(0), STATUS],
  status: {
    phase: 'Pending' as const,
    inputsConfigMap: `${RUN}-inputs`,
    slots: [`${podName(0)} Pending/Pending`],
  },
};

const rows: RunRow[] = [
  {
    name: 'the class does not exist: no claim, no Pod; Stalled StorageClassNotFound, looked up again in 10 s',
    run: issueRun(),
    workflow: claimed('fast-ssd'),
    steps: [
      {
        want: {
          actions: [GET_CLASS, STATUS],
          status: {
            reason: Reasons.StorageClassNotFound,
            message:
              'waiting for StorageClass fast-ssd (spec.workspace.volumeClaimTemplate.spec.storageClassName of Workflow wf): not found; a workspace claim of it would stay Pending',
            conditions: runConditions.stalled(Reasons.StorageClassNotFound),
            slots: [],
          },
          result: { requeueAfter: 10_000 },
        },
      },
      {
        advanceMs: 10_000,
        // Created meanwhile: the claim, the inputs and the Pod follow.
        answers: [{ match: GET_CLASS, answer: { body: { metadata: { name: 'fast-ssd' } } } }],
        want: { ...created, actions: [GET_CLASS, ...created.actions] },
      },
    ],
  },
  {
    name: 'a controller that may not read StorageClasses (bound per namespace) goes on as before',
    run: issueRun(),
    workflow: claimed('fast-ssd'),
    steps: [
      {
        answers: [failWith(GET_CLASS, 403, 'Forbidden')],
        want: { ...created, actions: [GET_CLASS, ...created.actions] },
      },
    ],
  },
  {
    name: 'no class named ("": a static volume): nothing to look up',
    run: issueRun(),
    workflow: claimed(''),
    steps: [{ want: created }],
  },
];

describe('IssueRun reconciler: the workspace claim StorageClass', () => {
  it.each(rows.map((row) => [row.name, row] as const))('%s', async (_name, row) => {
    await playRun(row);
  });
});
