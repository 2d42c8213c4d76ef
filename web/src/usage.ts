// The usage report reshaped for charts: one x value per UTC day, one series per Workflow.
// Pure, so the unit tests check the arithmetic without a browser.
import type { UsageRowView } from '../../src/server/view-api.js';

export interface UsageSeries {
  /** Seconds since the epoch of each UTC day, ascending. */
  days: number[];
  /** namespace/workflow → total tokens per day (0 when it had none). */
  tokens: { label: string; values: number[] }[];
  runs: number[];
  failed: number[];
  /** failed / runs per day, null on a day without runs. */
  failureRatio: (number | null)[];
}

export function usageSeries(rows: readonly UsageRowView[]): UsageSeries {
  const dayKeys = [...new Set(rows.map((r) => r.day))].sort();
  const index = new Map(dayKeys.map((d, i) => [d, i]));
  const labels = [...new Set(rows.map((r) => `${r.namespace}/${r.workflow}`))].sort();
  const tokens = labels.map((label) => ({ label, values: dayKeys.map(() => 0) }));
  const byLabel = new Map(tokens.map((t) => [t.label, t]));
  const runs = dayKeys.map(() => 0);
  const failed = dayKeys.map(() => 0);
  for (const row of rows) {
    const i = index.get(row.day) ?? 0;
    const series = byLabel.get(`${row.namespace}/${row.workflow}`);
    if (series) series.values[i] = (series.values[i] ?? 0) + row.totalTokens;
    runs[i] = (runs[i] ?? 0) + row.runs;
    failed[i] = (failed[i] ?? 0) + row.failed;
  }
  return {
    days: dayKeys.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000),
    tokens,
    runs,
    failed,
    failureRatio: runs.map((n, i) => (n === 0 ? null : (failed[i] ?? 0) / n)),
  };
}
