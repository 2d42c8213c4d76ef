// A Workflow whose workspace claim template names a StorageClass: the class is looked up
// before the first claim, so a run never waits on a claim that can only stay Pending with
// nothing on the IssueRun to say why.
import { describe, it } from 'vitest';
import { Reasons } from '../../../../src/api/index.js';
import { failWith } from '../../../support/fakes/controller.js';
import {
  GET_CLASS,
  RUN,
  claimStarted,
  claimedWorkspace,
  heldStalled,
  issueRun,
  playRun,
  workflow,
  type RunRow,
} from '../../../support/fakes/run-table.js';

const claimed = (storageClassName: string) => workflow(claimedWorkspace(storageClassName));

const created = (before: string[] = []) =>
  claimStarted(before, { inputsConfigMap: `${RUN}-inputs` });

const rows: RunRow[] = [
  {
    name: 'the class does not exist: no claim, no Pod; Stalled StorageClassNotFound, looked up again in 10 s',
    run: issueRun(),
    workflow: claimed('fast-ssd'),
    steps: [
      {
        want: heldStalled(
          Reasons.StorageClassNotFound,
          'waiting for StorageClass fast-ssd (spec.workspace.volumeClaimTemplate.spec.storageClassName of Workflow wf): not found; a workspace claim of it would stay Pending',
          [GET_CLASS],
          10_000,
        ),
      },
      {
        advanceMs: 10_000,
        // Created meanwhile: the claim, the inputs and the Pod follow.
        answers: [{ match: GET_CLASS, answer: { body: { metadata: { name: 'fast-ssd' } } } }],
        want: created([GET_CLASS]),
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
        want: created([GET_CLASS]),
      },
    ],
  },
  {
    name: 'no class named ("": a static volume): nothing to look up',
    run: issueRun(),
    workflow: claimed(''),
    steps: [{ want: created() }],
  },
];

describe('IssueRun reconciler: the workspace claim StorageClass', () => {
  it.each(rows)('$name', playRun);
});
