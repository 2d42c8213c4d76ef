import {
  BUDGET_SCOPES,
  DEFAULT_BUDGET_TIME_ZONE,
  DEFAULT_WARN_RATIO,
  type BudgetLimit,
  type BudgetLimits,
  type WorkflowBudget,
} from './budget.js';

/**
 * The limits in force: `agent.budget` of WORKFLOW.md, overridden field by field by the
 * Workflow's `spec.budget` (a platform team can set a ceiling in the resource that the
 * repository's WORKFLOW.md cannot raise by editing a file). Null when neither sets a limit.
 */
export function mergeBudgetLimits(
  fromConfig: WorkflowBudget | null | undefined,
  fromSpec: WorkflowBudget | null | undefined,
): BudgetLimits | null {
  const limits: BudgetLimits = {
    warnRatio: fromSpec?.warnRatio ?? fromConfig?.warnRatio ?? DEFAULT_WARN_RATIO,
    timeZone: fromSpec?.timeZone ?? fromConfig?.timeZone ?? DEFAULT_BUDGET_TIME_ZONE,
  };
  let limited = false;
  for (const scope of BUDGET_SCOPES) {
    // Per measure with ??, not by spreading: a spread would let a field present but
    // undefined in the spec erase the one WORKFLOW.md set.
    const tokens = fromSpec?.[scope]?.tokens ?? fromConfig?.[scope]?.tokens;
    const cost = fromSpec?.[scope]?.cost ?? fromConfig?.[scope]?.cost;
    const merged: BudgetLimit = {};
    if (tokens !== undefined) merged.tokens = tokens;
    if (cost !== undefined) merged.cost = cost;
    if (tokens !== undefined || cost !== undefined) {
      limits[scope] = merged;
      limited = true;
    }
  }
  return limited ? limits : null;
}
