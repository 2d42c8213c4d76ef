import {
  BUDGET_SCOPES,
  type BudgetLimit,
  type BudgetScope,
  type ModelPrice,
  type PriceTable,
  type RunBudget,
  type Spend,
} from '../workflow/budget.js';

/**
 * The runner's meter (docs/budgets.md): every usage report of the ACP session is added to
 * what the attempt spent and checked against each scope's limit. Pure and cheap (a few
 * additions per report), so it can run on every session update.
 *
 * Two kinds of report:
 * - a turn's token counts (PromptResponse.usage, when the turn ends): tokens are the
 *   turn's totalTokens; the cost is priced from the table when the model is in it;
 * - the agent's cumulative session cost (usage_update.cost, during a turn): an attempt has a
 *   session of its own, so the amount is the attempt's, and a turn can be stopped before it
 *   ends.
 * The attempt's cost is the larger of the two ways of counting it, so neither hides spend.
 */

export type BudgetMeasure = 'tokens' | 'cost';

/** A limit reached: at its warn ratio, or crossed. */
export interface BudgetCrossing {
  scope: BudgetScope;
  measure: BudgetMeasure;
  limit: number;
  spent: number;
  /** For people and the agent: `run cost 1.02 of 1.00 USD`. */
  message: string;
}

export interface BudgetVerdict {
  /** The first limit crossed (checked in BUDGET_SCOPES order), if any: stop the turn. */
  exceeded?: BudgetCrossing;
  /** Warn ratios reached for the first time by this report. */
  warnings: BudgetCrossing[];
  /** Set when the report was not counted (it went backwards or is absurd): log it once. */
  ignored?: string;
}

export interface TurnUsageReport {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedReadTokens?: number | null;
}

export interface BudgetMeter {
  turnEnded(usage: TurnUsageReport, model?: string): BudgetVerdict;
  costReported(cost: { amount: number; currency: string }): BudgetVerdict;
  /** The limits against what was spent so far, nothing added (an attempt's start). */
  check(): BudgetVerdict;
  /** What the attempt spent so far. */
  attemptSpend(): Spend;
  /** What each scope has spent, the attempt's included. */
  spend(scope: BudgetScope): Spend;
  /** True once a cost was worked out (priced tokens or the agent's own cost). */
  costKnown(): boolean;
}

/** More than this in one turn is not a real count. */
const ABSURD_TURN_TOKENS = 1e9;

export function priceFor(
  table: PriceTable | undefined,
  model: string | undefined,
): ModelPrice | undefined {
  if (!table || !model) return undefined;
  // Own keys only: a table that came through JSON (RUN_BUDGET_ENV) has Object.prototype,
  // and a model id such as `constructor` must not find its function.
  if (Object.hasOwn(table.models, model)) return table.models[model];
  let best: string | undefined;
  for (const key of Object.keys(table.models)) {
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  }
  return best === undefined ? undefined : table.models[best];
}

/** Cost of a turn's tokens; cached input at its own price where the table has one. */
export function costOf(usage: TurnUsageReport, price: ModelPrice): number {
  const cached = Math.min(usage.cachedReadTokens ?? 0, usage.inputTokens);
  const fresh = usage.inputTokens - cached;
  const cachedPrice = price.cachedInput ?? price.input;
  return (fresh * price.input + cached * cachedPrice + usage.outputTokens * price.output) / 1e6;
}

function validTurn(usage: TurnUsageReport): string | undefined {
  const counts = [usage.inputTokens, usage.outputTokens, usage.totalTokens];
  if (counts.some((n) => !Number.isFinite(n) || n < 0))
    return 'negative or non-numeric token counts';
  if (usage.totalTokens > ABSURD_TURN_TOKENS) return `${usage.totalTokens} tokens in one turn`;
  return undefined;
}

export function createBudgetMeter(budget: RunBudget): BudgetMeter {
  const { spentBefore, prices } = budget;
  let tokens = 0;
  let pricedCost = 0;
  let priced = false;
  let agentCost: number | undefined;
  const warned = new Set<string>();

  const attemptSpend = (): Spend => {
    if (!priced && agentCost === undefined) return { tokens };
    return { tokens, cost: Math.max(pricedCost, agentCost ?? 0) };
  };
  const spend = (scope: BudgetScope): Spend => {
    const own = attemptSpend();
    if (scope === 'attempt') return own;
    const before = spentBefore[scope];
    const cost =
      own.cost === undefined && before.cost === undefined
        ? undefined
        : (own.cost ?? 0) + (before.cost ?? 0);
    return cost === undefined
      ? { tokens: own.tokens + before.tokens }
      : { tokens: own.tokens + before.tokens, cost };
  };
  const check = (): BudgetVerdict => checkLimits(budget, spend, warned);

  return {
    turnEnded(usage, model) {
      const invalid = validTurn(usage);
      if (invalid) return { warnings: [], ignored: invalid };
      tokens += usage.totalTokens;
      const price = priceFor(prices, model);
      if (price) {
        priced = true;
        pricedCost += costOf(usage, price);
      }
      return check();
    },
    costReported(cost) {
      if (!Number.isFinite(cost.amount) || cost.amount < 0)
        return { warnings: [], ignored: `cost ${cost.amount}` };
      if (prices && cost.currency !== prices.currency) {
        return {
          warnings: [],
          ignored: `cost in ${cost.currency}, the price table is in ${prices.currency}`,
        };
      }
      if (agentCost !== undefined && cost.amount < agentCost) {
        return { warnings: [], ignored: `cost went back from ${agentCost} to ${cost.amount}` };
      }
      agentCost = cost.amount;
      return check();
    },
    check,
    attemptSpend,
    spend,
    costKnown: () => priced || agentCost !== undefined,
  };
}

function checkLimits(
  { limits, prices }: RunBudget,
  spend: (scope: BudgetScope) => Spend,
  warned: Set<string>,
): BudgetVerdict {
  const warnings: BudgetCrossing[] = [];
  let exceeded: BudgetCrossing | undefined;
  for (const scope of BUDGET_SCOPES) {
    const limit: BudgetLimit | undefined = limits[scope];
    if (!limit) continue;
    const spent = spend(scope);
    for (const measure of ['tokens', 'cost'] as const) {
      const max =
        measure === 'tokens'
          ? limit.tokens
          : limit.cost === undefined
            ? undefined
            : Number(limit.cost);
      const used = measure === 'tokens' ? spent.tokens : spent.cost;
      if (max === undefined || used === undefined) continue;
      const crossing = (): BudgetCrossing => ({
        scope,
        measure,
        limit: max,
        spent: used,
        message: describe(scope, measure, used, max, prices?.currency),
      });
      if (used >= max) exceeded ??= crossing();
      else if (used >= max * limits.warnRatio && !warned.has(`${scope}/${measure}`)) {
        warned.add(`${scope}/${measure}`);
        warnings.push(crossing());
      }
    }
  }
  return exceeded ? { exceeded, warnings } : { warnings };
}

function describe(
  scope: BudgetScope,
  measure: BudgetMeasure,
  spent: number,
  limit: number,
  currency?: string,
): string {
  if (measure === 'tokens') return `${scope} tokens ${spent} of ${limit}`;
  const unit = currency ? ` ${currency}` : '';
  return `${scope} cost ${spent.toFixed(4)} of ${money(limit)}${unit}`;
}

/** At least two decimals (`1.00`), but every digit the limit has (`0.005`, not `0.01`). */
function money(amount: number): string {
  const [whole, fraction = ''] = formatAmount(amount).split('.');
  return `${whole}.${fraction.padEnd(2, '0')}`;
}

/** A cost as the decimal string status and Events carry. */
export function formatAmount(amount: number): string {
  return amount.toFixed(6).replace(/\.?0+$/, '') || '0';
}
