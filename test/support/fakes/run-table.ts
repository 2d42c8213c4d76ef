// One import for an IssueRun table test: the objects it puts in the fake caches (objects.ts),
// the table player and its vocabulary (tables.ts), and the reconciler's requests as the rows
// spell them, the workspace claim's look-ups (StorageClass, VolumeSnapshot) among them.
import type { AnswerRule } from './controller.js';
import { RUN } from './objects.js';
import { runActions } from './tables.js';

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
