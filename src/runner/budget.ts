import { RUN_BUDGET_ENV, runBudgetSchema, type RunBudget } from '../workflow/budget.js';

/**
 * The attempt's budget, as the controller put it in the runner's environment (docs/budgets.md).
 * Absent: no limits and no prices (usage is still reported). Present but unreadable: the
 * run fails at once (runner_failed) rather than spend without the limits someone set.
 */
export function readRunBudget(env: NodeJS.ProcessEnv): RunBudget | undefined {
  const text = env[RUN_BUDGET_ENV];
  if (text === undefined || text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(
      `${RUN_BUDGET_ENV} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const parsed = runBudgetSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${RUN_BUDGET_ENV}: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}
