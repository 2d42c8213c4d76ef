import type { IssueRun, Workflow } from '../../api/index.js';
import { LEDGER_RUNS_KEPT, type DayUsage, type WorkflowBudgetStatus } from '../../api/budget.js';
import type { Spend } from '../../workflow/budget.js';
import { formatAmount } from '../../agent/budget-meter.js';
import { DEFAULT_BUDGET_TIME_ZONE } from '../../workflow/budget.js';
import { isTimeZone } from '../../workflow/budget-day.js';

/**
 * What runs spent, read from the cluster (docs/budgets.md): a run's days
 * (status.usageDays), the Workflow's day ledger (status.budget.runs, which outlives deleted
 * runs), and the sums the limits are checked against. Pure: both controllers use it, the
 * IssueRun one to give an attempt what was spent before it, the Workflow one for its day.
 */

export type LedgerEntry = NonNullable<WorkflowBudgetStatus['runs']>[string];

/** The key runs beyond LEDGER_RUNS_KEPT are summed under. */
export const EARLIER_RUNS_KEY = 'earlier';

const amount = (text: string | undefined): number | undefined =>
  text === undefined ? undefined : Number(text);

export function addSpend(a: Spend, b: Spend): Spend {
  const cost =
    a.cost === undefined && b.cost === undefined ? undefined : (a.cost ?? 0) + (b.cost ?? 0);
  return cost === undefined
    ? { tokens: a.tokens + b.tokens }
    : { tokens: a.tokens + b.tokens, cost };
}

const ZERO: Spend = { tokens: 0 };

function spendOf(entry: { tokens: number; cost?: string | undefined }): Spend {
  const cost = amount(entry.cost);
  return cost === undefined ? { tokens: entry.tokens } : { tokens: entry.tokens, cost };
}

/** All a run spent: its days, else (a run from before usageDays) its usage. */
export function runSpend(run: IssueRun): Spend {
  const days = run.status?.usageDays ?? [];
  if (days.length > 0) return days.reduce((sum, day) => addSpend(sum, spendOf(day)), ZERO);
  const usage = run.status?.usage;
  return usage ? spendOf({ tokens: usage.totalTokens, cost: usage.cost }) : ZERO;
}

/** What a run spent on one day. */
export function runDaySpend(run: IssueRun, day: string): Spend {
  const entry = run.status?.usageDays?.find((each) => each.day === day);
  return entry ? spendOf(entry) : ZERO;
}

/** The runs of a Workflow among the namespace's (by workflowRef, so hand-made runs count). */
export function workflowRuns(runs: readonly IssueRun[], workflow: Workflow): IssueRun[] {
  return runs.filter(
    (run) =>
      run.spec.workflowRef.name === workflow.metadata.name &&
      run.metadata.namespace === workflow.metadata.namespace,
  );
}

const entryOf = (issue: string, spend: Spend): LedgerEntry =>
  spend.cost === undefined
    ? { issue, tokens: spend.tokens }
    : { issue, tokens: spend.tokens, cost: formatAmount(spend.cost) };

/**
 * The Workflow's ledger of `day`: each run's spend that day, kept when the run is deleted
 * (the ledger of another day starts empty). Spend never goes down: a run read with less
 * than the ledger holds (a status not written yet) keeps the ledger's.
 */
export function dayLedger(
  recorded: WorkflowBudgetStatus | undefined,
  runs: readonly IssueRun[],
  day: string,
): Record<string, LedgerEntry> {
  const ledger: Record<string, LedgerEntry> = recorded?.day === day ? { ...recorded.runs } : {};
  for (const run of runs) {
    const uid = run.metadata.uid;
    const spend = runDaySpend(run, day);
    if (!uid || (spend.tokens === 0 && !spend.cost)) continue;
    const before = ledger[uid];
    const tokens = Math.max(before?.tokens ?? 0, spend.tokens);
    const costs = [amount(before?.cost), spend.cost].filter((n): n is number => n !== undefined);
    const merged: Spend = costs.length > 0 ? { tokens, cost: Math.max(...costs) } : { tokens };
    ledger[uid] = entryOf(run.spec.issue.identifier, merged);
  }
  return capLedger(ledger);
}

/** Beyond LEDGER_RUNS_KEPT runs, the smallest are summed into one entry: the total stays. */
function capLedger(ledger: Record<string, LedgerEntry>): Record<string, LedgerEntry> {
  const keys = Object.keys(ledger);
  if (keys.length <= LEDGER_RUNS_KEPT) return ledger;
  const sorted = keys
    .filter((key) => key !== EARLIER_RUNS_KEY)
    .sort((a, b) => (ledger[b]?.tokens ?? 0) - (ledger[a]?.tokens ?? 0));
  const kept = sorted.slice(0, LEDGER_RUNS_KEPT - 1);
  let folded = ledger[EARLIER_RUNS_KEY] ? spendOf(ledger[EARLIER_RUNS_KEY]) : ZERO;
  for (const key of sorted.slice(LEDGER_RUNS_KEPT - 1)) {
    const entry = ledger[key];
    if (entry) folded = addSpend(folded, spendOf(entry));
  }
  const capped: Record<string, LedgerEntry> = {};
  for (const key of kept) {
    const entry = ledger[key];
    if (entry) capped[key] = entry;
  }
  capped[EARLIER_RUNS_KEY] = entryOf('', folded);
  return capped;
}

export function ledgerTotal(ledger: Record<string, LedgerEntry>): Spend {
  return Object.values(ledger).reduce((sum, entry) => addSpend(sum, spendOf(entry)), ZERO);
}

/**
 * What the issue's runs of this Workflow spent: those the cluster holds, whole, and the
 * day's ledger entries of its runs that are gone.
 */
export function issueSpend(
  runs: readonly IssueRun[],
  identifier: string,
  recorded: WorkflowBudgetStatus | undefined,
  day: string,
): Spend {
  const own = runs.filter((run) => run.spec.issue.identifier === identifier);
  const held = new Set(own.map((run) => run.metadata.uid));
  let total = own.reduce((sum, run) => addSpend(sum, runSpend(run)), ZERO);
  if (recorded?.day === day) {
    for (const [uid, entry] of Object.entries(recorded.runs ?? {})) {
      if (entry.issue === identifier && !held.has(uid)) total = addSpend(total, spendOf(entry));
    }
  }
  return total;
}

/** One day's usage added to a run's days (the newest `keep` kept, oldest first). */
export function addDayUsage(
  days: readonly DayUsage[] | undefined,
  day: string,
  spend: Spend,
  keep: number,
): DayUsage[] {
  const list = (days ?? []).map((entry) => ({ ...entry }));
  let entry = list.find((each) => each.day === day);
  if (!entry) {
    entry = { day, tokens: 0 };
    list.push(entry);
  }
  entry.tokens += spend.tokens;
  if (spend.cost !== undefined) entry.cost = formatAmount((amount(entry.cost) ?? 0) + spend.cost);
  list.sort((a, b) => a.day.localeCompare(b.day));
  return list.slice(-keep);
}

/**
 * The time zone a Workflow's days are counted in, as its resource says: spec.budget's, else
 * the one its status recorded from WORKFLOW.md (the Workflow controller writes it), else UTC.
 */
export function budgetTimeZone(workflow: Workflow | undefined): string {
  const zone = workflow?.spec.budget?.timeZone ?? workflow?.status?.budget?.timeZone;
  return zone !== undefined && isTimeZone(zone) ? zone : DEFAULT_BUDGET_TIME_ZONE;
}
