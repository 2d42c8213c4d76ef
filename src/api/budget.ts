import { z } from 'zod';
import { decimalAmountSchema } from '../workflow/budget.js';

export * from '../workflow/budget.js';

/**
 * Budgets (docs/budgets.md): what an agent may spend and how spend is counted.
 *
 * Who does what:
 * - The controller turns the price table (a ConfigMap, PRICE_TABLE_KEY) and the limits
 *   (`agent.budget` in WORKFLOW.md, overridden field by field by `spec.budget`) into one
 *   RunBudget per attempt, with what the run, the issue and the Workflow's day had already
 *   spent when the attempt's Pod was built. It reaches the runner as the JSON value of the
 *   environment variable RUN_BUDGET_ENV: no network and no credential is needed to enforce it.
 * - The runner meters every usage report of the ACP session against it (src/agent/budget-meter.ts):
 *   a turn's token counts (PromptResponse.usage, at the turn's end) and the agent's cumulative
 *   cost (usage_update.cost, during the turn). When a limit is crossed the turn is cancelled and
 *   the slot fails with `budget_exceeded`; after_run still runs. At warnRatio the agent is told
 *   in the next turn's prompt.
 * - The controller writes what was spent into IssueRun status (usage, usageDays) and keeps the
 *   Workflow's day in `status.budget`; the dispatcher starts nothing while the day is spent.
 * - The agent asks `budget_status` (an MCP tool of the agent-tools gateway).
 */

/** The usage of a day (IssueRun status.usageDays, Workflow status.budget). */
export const dayUsageSchema = z
  .object({
    day: z.string().describe('YYYY-MM-DD in the budget time zone.'),
    tokens: z.int().min(0).describe('Tokens (input + output).'),
    cost: decimalAmountSchema.optional(),
  })
  .describe("One day's usage.");
export type DayUsage = z.infer<typeof dayUsageSchema>;

/** Days kept in IssueRun status.usageDays (the newest). */
export const USAGE_DAYS_KEPT = 8;
/** Runs kept in the Workflow's day ledger (status.budget.runs); beyond it they are summed. */
export const LEDGER_RUNS_KEPT = 500;

export const workflowBudgetStatusSchema = z
  .object({
    day: z.string().describe('The day counted (YYYY-MM-DD in timeZone).'),
    timeZone: z.string().describe('The time zone of day.'),
    tokens: z.int().min(0).describe("Tokens this Workflow's runs used this day."),
    cost: decimalAmountSchema.optional().describe('Their cost, when prices are known.'),
    currency: z.string().optional().describe('The currency of cost.'),
    exhausted: z
      .boolean()
      .optional()
      .describe('The day limit is spent: nothing new is dispatched until the next day.'),
    nextDayTime: z
      .string()
      .meta({ format: 'date-time' })
      .optional()
      .describe('When the next day starts (dispatch resumes then).'),
    runs: z
      .record(
        z.string(),
        z.object({
          issue: z.string().describe('The issue identifier.'),
          tokens: z.int().min(0),
          cost: decimalAmountSchema.optional(),
        }),
      )
      .optional()
      .describe(
        'The day ledger: each IssueRun uid → what it spent this day (kept when the run is deleted).',
      ),
    message: z
      .string()
      .optional()
      .describe('What could not be counted (unknown models, unreported usage).'),
  })
  .describe("This Workflow's spend today (docs/budgets.md).");
export type WorkflowBudgetStatus = z.infer<typeof workflowBudgetStatusSchema>;

/** Condition reasons and slot reasons of budgets and queues. */
export const BudgetReasons = {
  /** A slot's agent was stopped: a limit was crossed (the message names it). */
  BudgetExceeded: 'BudgetExceeded',
  /** The agent reported no usage: limits cannot hold (said once, in status). */
  UsageUnreported: 'UsageUnreported',
  /** The agent's model is not in the price table: counted in tokens only. */
  PriceUnknown: 'PriceUnknown',
} as const;

/** The MCP tool the agent asks its budget with. */
export const BUDGET_STATUS_TOOL = 'budget_status';
