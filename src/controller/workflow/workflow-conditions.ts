import {
  CONFIG_VALID,
  READY,
  RECONCILING,
  Reasons,
  STALLED,
  TRACKER_REACHABLE,
  setCondition,
  type Condition,
} from '../../api/index.js';
import type { Evaluation } from './evaluate.js';

/** What the conditions are computed from. */
export interface WorkflowConditionInput {
  current: readonly Condition[] | undefined;
  generation: number;
  evaluation: Evaluation;
  /** The snapshot ConfigMap runs start from; absent until a spec has ever loaded. */
  lastGoodConfigMap: string | undefined;
  suspended: boolean;
  /** How the last poll went; undefined: no poll this time (the condition stays as it is). */
  tracker?: { ok: true } | { ok: false; reason: string; message: string } | undefined;
  now: Date;
}

/**
 * Pure: ConfigValid says whether the current spec loads; Ready whether new runs can start
 * (from the last good snapshot, even when the current spec is bad); Stalled whether the
 * spec as written is not in force (it does not load: nothing to run, or the last good one).
 */
export function workflowConditions(input: WorkflowConditionInput): Condition[] {
  const { evaluation, lastGoodConfigMap } = input;
  let conditions = [...(input.current ?? [])];
  const set = (type: string, status: Condition['status'], reason: string, message: string) => {
    const condition = { type, status, reason, message, observedGeneration: input.generation };
    conditions = setCondition(conditions, condition, input.now);
  };

  if (evaluation.ok) {
    const { source, loaded } = evaluation.spec;
    const warnings = loaded.warnings.length > 0 ? ` (warnings: ${loaded.warnings.join('; ')})` : '';
    set(CONFIG_VALID, 'True', Reasons.ConfigValid, `loaded from ${source}${warnings}`);
  } else {
    set(CONFIG_VALID, 'False', evaluation.problem.reason, evaluation.problem.message);
  }

  if (input.tracker?.ok === true) {
    set(TRACKER_REACHABLE, 'True', Reasons.Polled, 'the tracker answered the last poll');
  } else if (input.tracker) {
    set(TRACKER_REACHABLE, 'False', input.tracker.reason, input.tracker.message);
  }

  const problem = evaluation.ok ? undefined : evaluation.problem;
  if (!lastGoodConfigMap) {
    const reason = problem?.reason ?? Reasons.ConfigInvalid;
    const message = problem?.message ?? 'no valid configuration yet';
    set(READY, 'False', reason, message);
    set(RECONCILING, 'False', Reasons.Reconciled, '');
    set(STALLED, 'True', reason, problem?.message ?? '');
    return conditions;
  }
  if (input.suspended) {
    // Suspended is a state the user asked for, not one on its way: Ready=False would make
    // kstatus (Flux, kpt) wait on it as InProgress forever. The reason says it.
    set(READY, 'True', Reasons.Suspended, 'spec.suspend is true: no new runs start');
  } else if (problem) {
    const message = `running the last good config ${lastGoodConfigMap}: ${problem.message}`;
    set(READY, 'True', problem.reason, message);
  } else {
    set(READY, 'True', Reasons.Reconciled, 'ready');
  }
  set(RECONCILING, 'False', Reasons.Reconciled, '');
  // Runs go on from the last good config, but what was applied is not in force: kstatus
  // must call that Failed until the spec is fixed, or GitOps reports a bad edit as healthy.
  if (problem) {
    set(STALLED, 'True', problem.reason, `the spec is not applied: ${problem.message}`);
  } else {
    set(STALLED, 'False', Reasons.Reconciled, '');
  }
  return conditions;
}
