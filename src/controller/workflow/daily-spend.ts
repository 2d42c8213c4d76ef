import { rfc3339, type IssueRun, type Workflow } from '../../api/index.js';
import { BudgetReasons, type WorkflowBudgetStatus } from '../../api/budget.js';
import { formatAmount, priceFor } from '../../agent/budget-meter.js';
import {
  DEFAULT_BUDGET_TIME_ZONE,
  type BudgetLimit,
  type PriceTable,
  type Spend,
} from '../../workflow/budget.js';
import { budgetDay, isTimeZone, nextDayStart } from '../../workflow/budget-day.js';
import { mergeBudgetLimits } from '../../workflow/budget-limits.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import { dayLedger, ledgerTotal, workflowRuns } from '../shared/spend.js';

/**
 * A Workflow's day (docs/budgets.md): what its runs spent today in its budget's time zone
 * (status.budget, with the ledger that outlives deleted runs), whether the day limit is
 * spent — then the dispatcher starts nothing new — and when the next day starts. Pure.
 */
export interface DayBudget {
  /** Undefined when there is no limit and nothing was spent today: nothing to show. */
  status: WorkflowBudgetStatus | undefined;
  spent: boolean;
  /** When the next day starts, while the day is spent (dispatch resumes then). */
  resumeAt?: Date;
}

export function isSpent(limit: BudgetLimit | undefined, spend: Spend): boolean {
  if (!limit) return false;
  if (limit.tokens !== undefined && spend.tokens >= limit.tokens) return true;
  return limit.cost !== undefined && spend.cost !== undefined && spend.cost >= Number(limit.cost);
}

/** Models the runs named that the price table does not price (counted in tokens only). */
function unpricedModels(runs: readonly IssueRun[], prices: PriceTable | undefined): string[] {
  if (!prices) return [];
  const models = new Set<string>();
  for (const run of runs) {
    for (const slot of run.status?.slots ?? []) {
      const model = slot.usage?.model;
      if (model && !priceFor(prices, model)) models.add(model);
    }
  }
  return [...models].sort().slice(0, 5);
}

/** Runs whose agents took turns and reported no usage: no limit can hold for them. */
function unreportedRuns(runs: readonly IssueRun[]): string[] {
  return runs
    .filter((run) => (run.status?.slots ?? []).some((slot) => (slot.turns ?? 0) > 0 && !slot.usage))
    .map((run) => run.metadata.name ?? '')
    .sort()
    .slice(0, 5);
}

export function dayBudget(input: {
  workflow: Workflow;
  /** The configuration in force (the last good one); undefined when there is none. */
  config: { agent: Pick<WorkflowConfig['agent'], 'budget'> } | undefined;
  /** The namespace's runs. */
  runs: readonly IssueRun[];
  prices: PriceTable | undefined;
  /** What is wrong with the price table, if anything. */
  pricesProblem?: string | undefined;
  now: Date;
}): DayBudget {
  const { workflow, now } = input;
  const limits = mergeBudgetLimits(input.config?.agent.budget, workflow.spec.budget);
  const problems: string[] = [];
  let timeZone = limits?.timeZone ?? DEFAULT_BUDGET_TIME_ZONE;
  if (!isTimeZone(timeZone)) {
    problems.push(`unknown time zone ${JSON.stringify(timeZone)}: days are counted in UTC`);
    timeZone = DEFAULT_BUDGET_TIME_ZONE;
  }
  const runs = workflowRuns(input.runs, workflow);
  const day = budgetDay(now, timeZone);
  const ledger = dayLedger(workflow.status?.budget, runs, day);
  const total = ledgerTotal(ledger);
  if (!limits && Object.keys(ledger).length === 0) return { status: undefined, spent: false };
  const unpriced = unpricedModels(runs, input.prices);
  if (unpriced.length > 0) {
    problems.push(
      `${BudgetReasons.PriceUnknown}: ${unpriced.join(', ')} not in the price table (tokens only)`,
    );
  }
  const unreported = limits ? unreportedRuns(runs) : [];
  if (unreported.length > 0) {
    problems.push(
      `${BudgetReasons.UsageUnreported}: the agents of ${unreported.join(', ')} report no usage; the limits cannot hold for them`,
    );
  }
  if (input.pricesProblem) problems.push(input.pricesProblem);
  const spent = isSpent(limits?.day, total);
  // Found by bisection (some fifty formats): only when a day limit needs it.
  const next = limits?.day ? nextDayStart(now, timeZone) : undefined;
  const status: WorkflowBudgetStatus = {
    day,
    timeZone,
    tokens: total.tokens,
    ...(total.cost === undefined ? {} : { cost: formatAmount(total.cost) }),
    ...(total.cost !== undefined && input.prices ? { currency: input.prices.currency } : {}),
    ...(spent ? { exhausted: true } : {}),
    ...(next ? { nextDayTime: rfc3339(next) } : {}),
    ...(Object.keys(ledger).length > 0 ? { runs: ledger } : {}),
    ...(problems.length > 0 ? { message: problems.join('; ') } : {}),
  };
  return spent && next ? { status, spent, resumeAt: next } : { status, spent };
}
