import type { IssueRun } from '../../api/index.js';
import { formatAmount } from '../../agent/budget-meter.js';
import { BUDGET_SCOPES, type RunBudget, type Spend } from '../../workflow/budget.js';

/**
 * What budget_status answers (docs/budgets.md), from the budget the controller would give the
 * attempt now: per scope its limit, what was spent and what is left. Spend of the attempt in
 * progress is what its Pod's log has reported so far.
 */
export function budgetAnswer(
  budget: RunBudget | undefined,
  run: IssueRun,
  attempt: number,
): object {
  if (!budget) return { limits: null, note: 'no spend limits: usage is counted, never stopped' };
  const attemptSpend = (run.status?.slots ?? [])
    .filter((slot) => slot.attempt === attempt && slot.usage)
    .reduce<Spend>(
      (sum, slot) => {
        const cost =
          slot.usage?.cost === undefined ? sum.cost : (sum.cost ?? 0) + Number(slot.usage.cost);
        return {
          tokens: sum.tokens + (slot.usage?.totalTokens ?? 0),
          ...(cost === undefined ? {} : { cost }),
        };
      },
      { tokens: 0 },
    );
  const spent: Record<string, Spend> = { attempt: attemptSpend, ...budget.spentBefore };
  const scopes = Object.fromEntries(
    BUDGET_SCOPES.flatMap((scope) => {
      const limit = budget.limits[scope];
      if (!limit) return [];
      const used = spent[scope] ?? { tokens: 0 };
      const left: Record<string, number | string> = {};
      if (limit.tokens !== undefined) left.tokens = Math.max(0, limit.tokens - used.tokens);
      if (limit.cost !== undefined)
        left.cost = formatAmount(Math.max(0, Number(limit.cost) - (used.cost ?? 0)));
      return [
        [
          scope,
          {
            limit,
            spent: {
              tokens: used.tokens,
              ...(used.cost === undefined ? {} : { cost: formatAmount(used.cost) }),
            },
            left,
          },
        ],
      ];
    }),
  );
  return {
    scopes,
    warnRatio: budget.limits.warnRatio,
    day: budget.day,
    timeZone: budget.limits.timeZone,
    ...(budget.prices ? { currency: budget.prices.currency } : {}),
  };
}
