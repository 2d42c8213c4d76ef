import { FINISHED, findCondition, type IssueRun } from '../../api/index.js';
import type { PodObject } from '../shared/resources.js';
import { isLive } from './attempts.js';
import { strandedInMs, type PodOutcome } from './pod-status.js';

// What the reconciler's guards ask of a run before it does anything: whose it is, whether it
// has finished, and the fixed outcome of an early-ended Pod (endings.ts: a stopped run's end).

/**
 * Expectations are the run object's, not its name's: a run deleted and re-created under
 * the same name owns none of the old one's Pods and must not wait on them.
 */
export const runUid = (run: IssueRun): string => run.metadata.uid ?? '';

const SLOT_ENDED = new Set(['Succeeded', 'Failed']);

/** A slot whose Pod ended before the run recorded its start: followed on, log first. */
export const ENDED_BEFORE_RECORDED = {
  phase: 'Running',
  reason: 'Running',
  message: 'the run Pod ended before its start was recorded; reading its log',
  finished: false,
} as const satisfies Partial<PodOutcome>;

/**
 * Finished as this controller records it: Finished=True, every slot it lists ended, and no
 * Pod of the run still running. A status patched Finished by hand over a live run says
 * otherwise: the run is followed on, and its status put right by the next write.
 */
export function hasFinished(run: IssueRun, pods: readonly PodObject[], now: Date): boolean {
  if (findCondition(run.status?.conditions, FINISHED)?.status !== 'True') return false;
  const slotsEnded = (run.status?.slots ?? []).every((slot) => SLOT_ENDED.has(slot.phase ?? ''));
  // A Pod stranded on a lost node stays "Running" forever: it holds nothing open.
  const running = (pod: PodObject) => isLive(pod) && !((strandedInMs(pod, now) ?? 1) <= 0);
  return slotsEnded && !pods.some(running);
}
