import type { IssueRun, Workflow } from '../../api/index.js';
import type { RunBudget } from '../../workflow/budget.js';
import type { WorkflowConfig } from '../../workflow/config.js';

/** How the reconciler asks for an attempt's budget (setup.ts wires the prices and the runs). */
export type BudgetFor = (
  run: IssueRun,
  workflow: Workflow,
  config: WorkflowConfig,
) => Promise<RunBudget | undefined>;

/** The budget of one run's attempt as ensureRunObjects takes it. */
export const attemptBudget = (
  budgetFor: BudgetFor | undefined,
  run: IssueRun,
  workflow: Workflow,
): ((config: WorkflowConfig) => Promise<RunBudget | undefined>) | undefined =>
  budgetFor && ((config) => budgetFor(run, workflow, config));
