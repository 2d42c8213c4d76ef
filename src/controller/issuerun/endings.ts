import { Reasons, ReviewReasons, type IssueRun } from '../../api/index.js';
import type { PodObject } from '../shared/resources.js';
import { ANNOTATION_STOP_NOTE, LABEL_ATTEMPT } from '../shared/constants.js';
import type { RunState, SlotView } from './status.js';

/**
 * How a run that stops reads: a run whose issue reached a terminal state once the run had
 * done work is a success (IssueCompleted); one stopped for any other reason is Cancelled,
 * saying what stopped it. Pure: the reconciler hands in what it saw and the Workflow's
 * states.
 *
 * "Work done" is what the cluster can show: an attempt of the run that ended Succeeded (its
 * Pod, or a slot waiting to continue after one), or a turn the agent completed in the
 * attempt it was on. No tracker adapter says who moved an issue, so an issue a person
 * closes after the agent completed a turn reads as completed too; one closed before the
 * run completed any turn reads as Cancelled (the run did nothing that could have finished
 * it), with what moved it where.
 */

export interface IssueStates {
  activeStates: readonly string[];
  terminalStates: readonly string[];
}

const key = (state: string): string => state.trim().toLowerCase();

/** Whether the run's issue (spec.issue.state) is in one of the terminal states. */
export function issueTerminal(run: IssueRun, states: IssueStates | null): boolean {
  const state = run.spec.issue.state;
  if (!states || state === null || state === undefined || state.trim() === '') return false;
  return states.terminalStates.some((candidate) => key(candidate) === key(state));
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * What work the run shows, in words (`attempt 1 succeeded`, `1 turn completed in attempt 2`),
 * or null when it shows none.
 */
export function workDone(
  run: IssueRun,
  views: readonly SlotView[],
  pods: readonly PodObject[],
): string | null {
  const succeeded = pods
    .filter((pod) => pod.status?.phase === 'Succeeded')
    .map((pod) => Number(pod.metadata?.labels?.[LABEL_ATTEMPT] ?? 0));
  for (const view of views) {
    if (view.outcome?.phase === 'Succeeded') succeeded.push(view.attempt);
  }
  for (const slot of run.status?.slots ?? []) {
    // Waiting to continue: the attempt it records succeeded.
    if (
      slot.reason === Reasons.ContinuationScheduled ||
      slot.reason === ReviewReasons.AwaitingReview
    ) {
      succeeded.push(slot.attempt ?? 0);
    }
  }
  const attempt = Math.max(0, ...succeeded);
  if (attempt > 0) return `attempt ${attempt} succeeded`;
  for (const view of views) {
    const recorded = run.status?.slots?.find(
      (slot) => slot.slot === view.slot && slot.attempt === view.attempt,
    )?.turns;
    const turns = Math.max(view.outcome?.summary?.turns ?? 0, view.log?.turns ?? 0, recorded ?? 0);
    if (turns > 0) return `${plural(turns, 'turn')} completed in attempt ${view.attempt}`;
  }
  return null;
}

const completed = (run: IssueRun, work: string): RunState => ({
  kind: 'finished',
  succeeded: true,
  reason: Reasons.IssueCompleted,
  message: `${run.spec.issue.identifier} reached ${run.spec.issue.state ?? ''} (a terminal state) after the run's work: ${work}`,
});

/** The end of a run that stopped on spec.cancelRequested. */
export function stoppedState(
  run: IssueRun,
  views: readonly SlotView[],
  pods: readonly PodObject[],
  states: IssueStates | null,
): RunState {
  const work = workDone(run, views, pods);
  const terminal = issueTerminal(run, states);
  if (terminal && work) return completed(run, work);
  // The dispatcher says what it saw on the tracker; a person's cancel says nothing more.
  const note = run.metadata.annotations?.[ANNOTATION_STOP_NOTE];
  const why = note ?? 'spec.cancelRequested is true';
  const unworked = terminal
    ? '; the run had completed no turn, so it did not finish the issue'
    : '';
  return {
    kind: 'finished',
    succeeded: false,
    reason: Reasons.Cancelled,
    message: `cancelled: ${why}${unworked}`,
  };
}

/**
 * A run that ended on its own: a success with its issue terminal is IssueCompleted (the
 * turn loop ended on the terminal state, or the agent's last turn left it there).
 */
export function endedState(
  run: IssueRun,
  state: RunState,
  views: readonly SlotView[],
  states: IssueStates | null,
): RunState {
  if (state.kind !== 'finished' || !state.succeeded) return state;
  const review = run.status?.review;
  // Out of rounds with feedback still open: a success of its attempts, but not of the review.
  if (review?.phase === ReviewReasons.MaxRoundsReached) {
    return { ...state, reason: ReviewReasons.MaxRoundsReached, message: review.message ?? '' };
  }
  if (!issueTerminal(run, states)) {
    return review?.phase && review.message ? { ...state, message: review.message } : state;
  }
  return completed(run, workDone(run, views, []) ?? 'the run succeeded');
}
