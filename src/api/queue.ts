import { z } from 'zod';

/**
 * What a run Pod carries for Kueue's plain-Pod integration (kueue.x-k8s.io, v0.17): the names
 * Kueue's Pod webhook and Pod controller read. docs/queues.md says how they are used.
 */
export const KUEUE_QUEUE_LABEL = 'kueue.x-k8s.io/queue-name';
/** Pods that share this label value and total count are one Kueue Workload, admitted whole. */
export const KUEUE_POD_GROUP_LABEL = 'kueue.x-k8s.io/pod-group-name';
export const KUEUE_POD_GROUP_TOTAL_ANNOTATION = 'kueue.x-k8s.io/pod-group-total-count';
/**
 * "false": a failed Pod of the group is not waited for to be replaced. Our retries make Pods of
 * a new group, so an old group must end (and free its quota) once none of its Pods runs.
 */
export const KUEUE_RETRIABLE_IN_GROUP_ANNOTATION = 'kueue.x-k8s.io/retriable-in-group';
/** The scheduling gate Kueue's webhook puts on a queued Pod and removes on admission. */
export const KUEUE_ADMISSION_GATE = 'kueue.x-k8s.io/admission';
/** The Pod condition Kueue sets on a Pod it stops; its reason says why (…DueToPreempted). */
export const KUEUE_TERMINATION_CONDITION = 'TerminationTarget';
/** The Workload label Kueue sets to the uid of the single Pod it stands for. */
export const KUEUE_JOB_UID_LABEL = 'kueue.x-k8s.io/job-uid';

/**
 * A LocalQueue's name as a Pod label value can hold it: a DNS label (Kueue's LocalQueue names
 * are object names, but the queue-name label caps them at 63 characters).
 */
export const kueueQueueNameSchema = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label (a LocalQueue name)');
