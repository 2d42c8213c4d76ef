import type { RunBudget } from '../workflow/budget.js';
import type { TokenUsage } from '../workflow/events.js';
import {
  createBudgetMeter,
  formatAmount,
  type BudgetCrossing,
  type BudgetVerdict,
  type TurnUsageReport,
} from './budget-meter.js';
import type { AgentEmit } from './session.js';

/**
 * The attempt's budget while the agent runs (docs/budgets.md): every usage report goes
 * through the meter; a crossed limit is returned for the caller to stop the turn with, a
 * reached warn ratio becomes a `budget_warning` record and a notice in the next prompt. The
 * records say each thing once: a report ignored as impossible, an agent that reports no
 * usage (the limits cannot hold, and the run says so rather than pretend).
 */
export interface BudgetGuard {
  /** Before the first turn: a limit already spent by earlier attempts or runs stops here. */
  atStart(): BudgetCrossing | undefined;
  /** The agent's cumulative session cost (ACP usage_update.cost), during a turn. */
  costReported(cost: { amount: number; currency: string }): BudgetCrossing | undefined;
  /** A turn ended with these token counts (undefined: the agent reported none). */
  turnEnded(
    usage: TurnUsageReport | null | undefined,
    model: string | undefined,
  ): BudgetCrossing | undefined;
  /** The warnings since the last call, as text for the next prompt ('' when none). */
  takeNotice(): string;
  /** The attempt's usage with its cost, as run records carry it. */
  withCost(usage: TokenUsage | undefined, model: string | undefined): TokenUsage | undefined;
}

export function createBudgetGuard(budget: RunBudget, emit: AgentEmit): BudgetGuard {
  const meter = createBudgetMeter(budget);
  const hasLimits = Boolean(
    budget.limits.attempt ?? budget.limits.run ?? budget.limits.issue ?? budget.limits.day,
  );
  const ignoredSaid = new Set<string>();
  let unreportedSaid = false;
  let pending: BudgetCrossing[] = [];
  /** The unit of the agent's own cost reports, when there is no price table to name one. */
  let reportedCurrency: string | undefined;

  const record = (crossing: BudgetCrossing, type: 'budget_warning' | 'budget_exceeded') =>
    emit(type, {
      scope: crossing.scope,
      measure: crossing.measure,
      limit: crossing.limit,
      spent: crossing.spent,
      message: crossing.message,
    });

  const judge = (verdict: BudgetVerdict): BudgetCrossing | undefined => {
    if (verdict.ignored !== undefined) {
      // Once per kind of nonsense: an agent that keeps sending it must not flood the log.
      const kind = verdict.ignored.replace(/[\d.]+/g, 'N');
      if (!ignoredSaid.has(kind)) {
        ignoredSaid.add(kind);
        emit('stderr', `lorenz: usage report ignored (${verdict.ignored})`);
      }
      return undefined;
    }
    for (const warning of verdict.warnings) {
      record(warning, 'budget_warning');
      pending.push(warning);
    }
    if (verdict.exceeded) record(verdict.exceeded, 'budget_exceeded');
    return verdict.exceeded;
  };

  return {
    atStart() {
      return judge(meter.check());
    },
    costReported(cost) {
      const crossed = judge(meter.costReported(cost));
      if (!budget.prices && meter.costKnown()) reportedCurrency = cost.currency.slice(0, 16);
      return crossed;
    },
    turnEnded(usage, model) {
      if (!usage) {
        if (hasLimits && !unreportedSaid) {
          unreportedSaid = true;
          emit('usage_unreported', {
            message:
              'the agent reported no token usage for its turn: the budget limits cannot hold for this attempt',
          });
        }
        return undefined;
      }
      return judge(meter.turnEnded(usage, model));
    },
    takeNotice() {
      const notice = budgetNotice(pending);
      pending = [];
      return notice;
    },
    withCost(usage, model) {
      if (!usage) return usage;
      const spend = meter.attemptSpend();
      return {
        ...usage,
        ...(spend.cost === undefined ? {} : { cost: formatAmount(spend.cost) }),
        ...(spend.cost !== undefined && (budget.prices ?? reportedCurrency)
          ? { currency: budget.prices?.currency ?? reportedCurrency }
          : {}),
        ...(model ? { model } : {}),
      };
    },
  };
}

/** What the agent is told in its next prompt when a limit's warn ratio was reached. */
export function budgetNotice(warnings: readonly BudgetCrossing[]): string {
  if (warnings.length === 0) return '';
  const lines = warnings.map((warning) => `- ${warning.message}`);
  return [
    '',
    '--- budget ---',
    'You are close to a spend limit of this run; the agent is stopped when it is reached:',
    ...lines,
    'Finish the most important part of the work first. The budget_status tool tells what is left.',
    '--- end budget ---',
    '',
  ].join('\n');
}
