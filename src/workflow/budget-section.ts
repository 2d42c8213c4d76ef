import { z } from 'zod';
import type { BudgetLimit, WorkflowBudget } from './budget.js';
import { BUDGET_SCOPES } from './budget.js';
import { isTimeZone } from './budget-day.js';
import { type ConfigProblem, isMap, parseSection } from './config-sections.js';

/**
 * `agent.budget` (docs/budgets.md): spend limits per attempt, run, issue and Workflow day,
 * in tokens and/or cost. Absent is null (no limit). Every problem is named at load
 * (`agent.budget.run.tokens: …`), so a limit that could not hold is never found mid-run.
 */

type Context = { warnings: string[]; problems: ConfigProblem[] };

const PATH = 'agent.budget';

/** A cost as written in YAML (a number or a decimal string), normalised to a decimal string. */
const costLimit = z.union([z.number(), z.string()]).transform((value, context) => {
  const text = typeof value === 'number' ? String(value) : value.trim();
  if (!/^\d{1,12}(\.\d{1,9})?$/.test(text)) {
    context.addIssue({
      code: 'custom',
      message: `must be a positive amount such as 2.50, got ${JSON.stringify(value)}`,
    });
    return z.NEVER;
  }
  if (Number(text) <= 0) {
    context.addIssue({ code: 'custom', message: 'must be more than 0 (omit it for no limit)' });
    return z.NEVER;
  }
  return text;
});

// Not strict: unknown keys are named by parseBudgetSection with their full path
// (`agent.budget.attempt.tokns`), which zod's unrecognized_keys issue would not give.
const limitSection = z.object({
  tokens: z
    .int({ message: 'must be a whole number of tokens' })
    .min(1, { message: 'must be at least 1 (omit it for no limit)' })
    .optional(),
  cost: costLimit.optional(),
});

export const budgetSection = z.object({
  attempt: limitSection.optional(),
  run: limitSection.optional(),
  issue: limitSection.optional(),
  day: limitSection.optional(),
  warn_ratio: z
    .number({ message: 'must be a number between 0 and 1' })
    .gt(0, { message: 'must be more than 0' })
    .lt(1, { message: 'must be less than 1' })
    .optional(),
  time_zone: z.string().min(1).max(64).optional(),
});

export function parseBudgetSection(value: unknown, context: Context): WorkflowBudget | null {
  if (value === undefined || value === null) return null;
  if (!isMap(value)) {
    context.problems.push({ path: PATH, rule: 'must be a map (attempt, run, issue, day, …)' });
    return null;
  }
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(budgetSection.shape, key))
      context.problems.push({
        path: `${PATH}.${key}`,
        rule: `unknown key (known: ${Object.keys(budgetSection.shape).join(', ')})`,
      });
  }
  for (const scope of BUDGET_SCOPES) {
    const limit = value[scope];
    if (!isMap(limit)) continue;
    for (const key of Object.keys(limit)) {
      if (!Object.hasOwn(limitSection.shape, key))
        context.problems.push({
          path: `${PATH}.${scope}.${key}`,
          rule: `unknown key (known: ${Object.keys(limitSection.shape).join(', ')})`,
        });
    }
  }
  const section = parseSection(budgetSection, value, PATH, context);
  if (!section) return null;
  if (section.time_zone !== undefined && !isTimeZone(section.time_zone)) {
    context.problems.push({
      path: `${PATH}.time_zone`,
      rule: `unknown time zone ${JSON.stringify(section.time_zone)} (an IANA name such as Europe/Paris)`,
    });
    return null;
  }
  const budget: WorkflowBudget = {};
  for (const scope of BUDGET_SCOPES) {
    const limit = section[scope];
    if (!limit) continue;
    const kept: BudgetLimit = {};
    if (limit.tokens !== undefined) kept.tokens = limit.tokens;
    if (limit.cost !== undefined) kept.cost = limit.cost;
    if (kept.tokens === undefined && kept.cost === undefined) {
      context.problems.push({ path: `${PATH}.${scope}`, rule: 'set tokens, cost or both' });
      return null;
    }
    budget[scope] = kept;
  }
  if (section.warn_ratio !== undefined) budget.warnRatio = section.warn_ratio;
  if (section.time_zone !== undefined) budget.timeZone = section.time_zone;
  return budget;
}
