import { z } from 'zod';

/**
 * Budgets (docs/budgets.md): limits, prices and spend, shared by the runner's meter
 * (src/agent/budget-meter.ts), WORKFLOW.md's `agent.budget` and the CRDs (src/api/budget.ts).
 */

/** Amounts of money are decimal strings (`"1.25"`): Kubernetes API conventions avoid floats. */
export const decimalAmountSchema = z
  .string()
  .regex(/^\d{1,12}(\.\d{1,9})?$/)
  .describe('An amount of money, a decimal string such as "1.25", in the price table currency.');

export const budgetLimitSchema = z
  .object({
    tokens: z.int().min(1).optional().describe('At most this many tokens (input + output).'),
    cost: decimalAmountSchema.optional().describe('At most this cost (needs a price table).'),
  })
  .describe('A limit: tokens and/or cost; the first one crossed stops the agent.');
export type BudgetLimit = z.infer<typeof budgetLimitSchema>;

/** The scopes a limit applies to, in the order they are checked. */
export const BUDGET_SCOPES = ['attempt', 'run', 'issue', 'day'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];

/** The default share of a limit at which the agent is warned. */
export const DEFAULT_WARN_RATIO = 0.8;
/** The time zone days are counted in when none is set. */
export const DEFAULT_BUDGET_TIME_ZONE = 'UTC';

export const workflowBudgetSchema = z
  .object({
    attempt: budgetLimitSchema.optional().describe('Per attempt (one Pod of one slot).'),
    run: budgetLimitSchema
      .optional()
      .describe('Per IssueRun: all its attempts and continuations, every slot.'),
    issue: budgetLimitSchema
      .optional()
      .describe(
        "Per issue, across this Workflow's runs of it (the runs the cluster holds and the day's ledger).",
      ),
    day: budgetLimitSchema
      .optional()
      .describe(
        'Per Workflow per day (in timeZone): once spent, nothing new is dispatched until the next day.',
      ),
    warnRatio: z
      .number()
      .gt(0)
      .lt(1)
      .optional()
      .describe(`Share of a limit at which the agent is warned; default ${DEFAULT_WARN_RATIO}.`),
    timeZone: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(`IANA time zone the day is counted in; default ${DEFAULT_BUDGET_TIME_ZONE}.`),
  })
  .describe(
    'Spend limits (docs/budgets.md), field by field over `agent.budget` of WORKFLOW.md. Enforced while the agent runs.',
  );
export type WorkflowBudget = z.infer<typeof workflowBudgetSchema>;

/** The limits in force after WORKFLOW.md and spec.budget are merged (the runner's view). */
export interface BudgetLimits {
  attempt?: BudgetLimit;
  run?: BudgetLimit;
  issue?: BudgetLimit;
  day?: BudgetLimit;
  warnRatio: number;
  timeZone: string;
}

/**
 * The price table: a ConfigMap in the controller's namespace (the chart ships
 * `lorenz-prices`), its key PRICE_TABLE_KEY holding YAML of this shape. Prices are per
 * million tokens. A model not in the table is counted in tokens only, and status says so.
 */
export const PRICE_TABLE_KEY = 'prices.yaml';
export const modelPriceSchema = z.object({
  input: z.number().min(0),
  cachedInput: z.number().min(0).optional(),
  output: z.number().min(0),
});
export type ModelPrice = z.infer<typeof modelPriceSchema>;
export interface PriceTable {
  /** ISO 4217 code (or another unit) every amount is in. */
  currency: string;
  /** By model id as the agent reports it (exact match, then the longest matching prefix). */
  models: Record<string, ModelPrice>;
}

/** What was spent, in the units the meter adds up. */
export interface Spend {
  tokens: number;
  /** In the price table's currency; absent when no cost could be worked out. */
  cost?: number;
}

/** The environment variable of the runner container carrying the attempt's RunBudget as JSON. */
export const RUN_BUDGET_ENV = 'LORENZ_BUDGET';

/** What an attempt is given: its limits, what was spent before it, and the prices. */
export interface RunBudget {
  limits: BudgetLimits;
  /** Spent before this attempt's Pod was built, by scope (attempt is always zero). */
  spentBefore: { run: Spend; issue: Spend; day: Spend };
  /** The day spentBefore.day counts (YYYY-MM-DD in limits.timeZone). */
  day: string;
  prices?: PriceTable;
}

const spendSchema = z.object({ tokens: z.number().min(0), cost: z.number().min(0).optional() });

/** RunBudget as the runner reads it back from RUN_BUDGET_ENV (the controller wrote it). */
export const runBudgetSchema = z.object({
  limits: z.object({
    attempt: budgetLimitSchema.optional(),
    run: budgetLimitSchema.optional(),
    issue: budgetLimitSchema.optional(),
    day: budgetLimitSchema.optional(),
    warnRatio: z.number().gt(0).lt(1),
    timeZone: z.string().min(1),
  }),
  spentBefore: z.object({ run: spendSchema, issue: spendSchema, day: spendSchema }),
  day: z.string(),
  prices: z
    .object({ currency: z.string().min(1), models: z.record(z.string(), modelPriceSchema) })
    .optional(),
});
