import type { IssueRun, Workflow } from '../../api/index.js';
import {
  DEFAULT_BUDGET_TIME_ZONE,
  DEFAULT_WARN_RATIO,
  type PriceTable,
  type RunBudget,
  type Spend,
} from '../../workflow/budget.js';
import { budgetDay, isTimeZone } from '../../workflow/budget-day.js';
import { mergeBudgetLimits } from '../../workflow/budget-limits.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import { dayLedger, issueSpend, ledgerTotal, runSpend, workflowRuns } from './spend.js';

/**
 * What an attempt is given to enforce (docs/budgets.md): the limits in force (WORKFLOW.md's
 * `agent.budget`, overridden field by field by the Workflow's spec.budget), what its run,
 * its issue and its Workflow's day had spent when its Pod was built, and the prices.
 * Undefined when there is neither a limit nor a price table: the runner then only counts.
 */
export function composeRunBudget(input: {
  config: { agent: Pick<WorkflowConfig['agent'], 'budget'> };
  workflow: Workflow;
  run: IssueRun;
  /**
   * The namespace's runs, as fresh as the controller knows them: asked for only when an
   * issue or day limit needs them (a start must not cost a pass over every run otherwise).
   */
  runs: () => readonly IssueRun[];
  prices: PriceTable | undefined;
  now: Date;
}): RunBudget | undefined {
  const { workflow, run, prices } = input;
  const merged = mergeBudgetLimits(input.config.agent.budget, workflow.spec.budget);
  if (!merged && !prices) return undefined;
  const limits = merged ?? { warnRatio: DEFAULT_WARN_RATIO, timeZone: DEFAULT_BUDGET_TIME_ZONE };
  // spec.budget.timeZone is not checked by the API server; the Workflow's status says so.
  if (!isTimeZone(limits.timeZone)) limits.timeZone = DEFAULT_BUDGET_TIME_ZONE;
  const day = budgetDay(input.now, limits.timeZone);
  const zero = { tokens: 0 };
  let issue: Spend = zero;
  let daySpend: Spend = zero;
  if (limits.issue || limits.day) {
    const runs = workflowRuns(input.runs(), workflow);
    if (!runs.some((each) => each.metadata.uid === run.metadata.uid)) runs.push(run);
    const recorded = workflow.status?.budget;
    if (limits.issue) issue = issueSpend(runs, run.spec.issue.identifier, recorded, day);
    if (limits.day) daySpend = ledgerTotal(dayLedger(recorded, runs, day));
  }
  return {
    limits,
    // What a scope without a limit spent is not needed (nothing checks it).
    spentBefore: { run: limits.run ? runSpend(run) : zero, issue, day: daySpend },
    day,
    ...(prices ? { prices } : {}),
  };
}
