// One import for an IssueRun table test: the objects it puts in the fake caches (objects.ts),
// the table player and its vocabulary (tables.ts), and the reconciler's requests as the rows
// spell them, the workspace claim's look-ups (StorageClass, VolumeSnapshot) among them. The
// wants several tables share: a first start on the claim, a run held Stalled before any Pod
// (claim, Secret and queue look-ups alike), and a run's end.
import type { AnswerRule } from './controller.js';
import { RUN } from './objects.js';
import {
  runActions,
  runConditions,
  runWrites,
  slotSummary,
  type RunStep,
  type RunSummary,
  type Want,
} from './tables.js';

export * from './objects.js';
export * from './tables.js';

export const { status: STATUS, createInputs: CREATE_INPUTS, createPod: CREATE_POD } = runActions;

/** The look-up of the StorageClass the tests' claimed workspaces name (claimedWorkspace('fast-ssd')). */
export const GET_CLASS = 'GET storageclasses/fast-ssd';
/** The list of StorageClasses read when a claim template names none (to find the default). */
export const LIST_CLASSES = 'GET storageclasses';
export const LIST_SNAPSHOT_CLASSES = 'GET volumesnapshotclasses';
export const getSnapshot = (name: string): string => `GET volumesnapshots/${name}`;
/** The create of slot 0's workspace claim. */
export const CREATE_CLAIM = `POST persistentvolumeclaims/${RUN}-0-workspace`;

/** StorageClass fast-ssd found, provisioned by the CSI driver the snapshot classes must serve. */
export const classFound: AnswerRule = {
  match: GET_CLASS,
  answer: { body: { metadata: { name: 'fast-ssd' }, provisioner: 'hostpath.csi.example' } },
};

/** A first reconcile that starts on slot 0's workspace claim after the look-ups `before`: the
 *  run Pending on its Pending Pod, with whatever else `status` says. */
export const claimStarted = (
  before: string[],
  status: Partial<RunSummary> = {},
): Want<RunSummary> => ({
  actions: [...before, CREATE_INPUTS, CREATE_CLAIM, CREATE_POD(0), STATUS],
  status: { phase: 'Pending', slots: [slotSummary(0, 'Pending/Pending')], ...status },
});
/** StorageClass fast-ssd found: the run starts on its claim from a clean workspace. */
export const startsClean: RunStep = {
  answers: [classFound],
  want: claimStarted([GET_CLASS], { workspaceSource: { type: 'Clean' } }),
};

/** A first reconcile that holds the run Stalled `reason` with no claim or Pod, after the
 *  look-ups `before`, and looks again in `requeueMs`. */
export const heldStalled = (
  reason: string,
  message: string,
  before: string[],
  requeueMs: number,
): Want<RunSummary> => ({
  actions: [...before, STATUS],
  status: {
    phase: 'Pending',
    reason,
    message,
    conditions: runConditions.stalled(reason),
    slots: [],
  },
  result: { requeueAfter: requeueMs },
});

/** The write of a run's end: `phase` for `reason`, in its status and its conditions. */
export function runEnded(
  phase: 'Succeeded' | 'Failed',
  reason: string,
  more: Partial<RunSummary> = {},
): Want<RunSummary> {
  const conditions = runConditions.finished(phase === 'Succeeded', reason);
  return runWrites({ phase, reason, conditions, ...more });
}
