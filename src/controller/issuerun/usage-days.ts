import type { IssueRunStatus, SlotStatus } from '../../api/index.js';
import { USAGE_DAYS_KEPT } from '../../api/budget.js';
import type { Spend } from '../../workflow/budget.js';
import type { TokenUsage } from '../../workflow/events.js';
import { formatAmount } from '../../agent/budget-meter.js';
import { addDayUsage } from '../shared/spend.js';

/**
 * A run's spend by day (status.usageDays, docs/budgets.md). A slot's usage is its current
 * attempt's, cumulative; what it grew by since the status this write builds on is added to
 * the day of the write. So attempts that came and went still count, a log read again from
 * its start (after a restart) counts nothing twice — a slot's usage never goes down within
 * its attempt — and each write adds what it saw once, whatever interval it waited out.
 */

const costOf = (usage: TokenUsage | undefined): number | undefined =>
  usage?.cost === undefined ? undefined : Number(usage.cost);

/** The larger of two reads of one attempt's cumulative usage, field by field. */
function atLeast(usage: TokenUsage, before: TokenUsage): TokenUsage {
  const merged: TokenUsage = {
    ...before,
    ...usage,
    inputTokens: Math.max(usage.inputTokens, before.inputTokens),
    outputTokens: Math.max(usage.outputTokens, before.outputTokens),
    totalTokens: Math.max(usage.totalTokens, before.totalTokens),
  };
  const cached = Math.max(usage.cachedInputTokens ?? 0, before.cachedInputTokens ?? 0);
  if (cached > 0) merged.cachedInputTokens = cached;
  const cost = Math.max(costOf(usage) ?? 0, costOf(before) ?? 0);
  if (usage.cost !== undefined || before.cost !== undefined) merged.cost = formatAmount(cost);
  return merged;
}

const sameAttempt = (slot: SlotStatus, recorded: readonly SlotStatus[]): SlotStatus | undefined =>
  recorded.find((entry) => entry.slot === slot.slot && entry.attempt === slot.attempt);

/** Slots with usage that never goes down, and what they grew by since `recorded`. */
function grown(
  slots: readonly SlotStatus[],
  recorded: readonly SlotStatus[],
): { slots: SlotStatus[]; growth: Spend } {
  let tokens = 0;
  let cost: number | undefined;
  const kept = slots.map((slot) => {
    const before = sameAttempt(slot, recorded)?.usage;
    if (!slot.usage) return before ? { ...slot, usage: before } : slot;
    const usage = before ? atLeast(slot.usage, before) : slot.usage;
    tokens += usage.totalTokens - (before?.totalTokens ?? 0);
    const now = costOf(usage);
    if (now !== undefined) cost = (cost ?? 0) + now - (costOf(before) ?? 0);
    return { ...slot, usage };
  });
  return { slots: kept, growth: cost === undefined ? { tokens } : { tokens, cost } };
}

/** The run's usage: its slots' summed, with the cost's currency and the last model named. */
export function sumSlotUsage(slots: readonly SlotStatus[]): TokenUsage | undefined {
  const used = slots.flatMap((slot) => (slot.usage ? [slot.usage] : []));
  if (used.length === 0) return undefined;
  const total: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  let cached = 0;
  let cost: number | undefined;
  for (const usage of used) {
    total.inputTokens += usage.inputTokens;
    total.outputTokens += usage.outputTokens;
    total.totalTokens += usage.totalTokens;
    cached += usage.cachedInputTokens ?? 0;
    if (usage.cost !== undefined) cost = (cost ?? 0) + Number(usage.cost);
    if (usage.currency) total.currency = usage.currency;
    if (usage.model) total.model = usage.model;
  }
  if (cached > 0) total.cachedInputTokens = cached;
  if (cost !== undefined) total.cost = formatAmount(cost);
  else delete total.currency;
  return total;
}

/**
 * `built` with its slots' usage made monotonic against `base` (the status written last) and
 * their growth added to `day` in usageDays. `ended`: the slots of attempts that ended and
 * are replaced in this write by new ones (a retry), counted first so their last turns are not lost.
 */
export function carryUsage(
  built: IssueRunStatus,
  base: IssueRunStatus | undefined,
  day: string,
  ended: readonly SlotStatus[] = [],
): IssueRunStatus {
  let recorded = base?.slots ?? [];
  let days = base?.usageDays;
  const count = (growth: Spend) => {
    if (growth.tokens > 0 || (growth.cost ?? 0) > 0)
      days = addDayUsage(days, day, growth, USAGE_DAYS_KEPT);
  };
  if (ended.length > 0) {
    const last = grown(ended, recorded);
    count(last.growth);
    recorded = [...recorded.filter((slot) => !sameAttempt(slot, last.slots)), ...last.slots];
  }
  if (!built.slots) return days ? { ...built, usageDays: days } : built;
  const now = grown(built.slots, recorded);
  count(now.growth);
  const next: IssueRunStatus = { ...built, slots: now.slots };
  const usage = sumSlotUsage(now.slots);
  if (usage) next.usage = usage;
  if (days) next.usageDays = days;
  return next;
}
