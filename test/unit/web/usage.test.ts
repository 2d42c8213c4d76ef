// The usage page's charts (web/src/usage.ts): one x per UTC day, a token series per
// Workflow with zeros on its quiet days, runs and the failure ratio summed over Workflows.
import { expect, it } from 'vitest';
import type { UsageRowView } from '../../../src/server/view-api.js';
import { usageSeries } from '../../../web/src/usage.js';

const row = (
  namespace: string,
  workflow: string,
  day: string,
  totalTokens: number,
  runs: number,
  failed: number,
): UsageRowView => ({
  namespace,
  workflow,
  day,
  inputTokens: totalTokens,
  outputTokens: 0,
  totalTokens,
  runs,
  failed,
});

it('reshapes rows into aligned daily series', () => {
  const series = usageSeries([
    row('a', 'board', '2026-01-02', 300, 4, 1),
    row('a', 'board', '2026-01-01', 100, 2, 0),
    row('b', 'docs', '2026-01-02', 50, 1, 1),
    row('a', 'board', '2026-01-03', 0, 0, 0),
  ]);
  expect(series.days).toEqual([
    Date.parse('2026-01-01T00:00:00Z') / 1000,
    Date.parse('2026-01-02T00:00:00Z') / 1000,
    Date.parse('2026-01-03T00:00:00Z') / 1000,
  ]);
  expect(series.tokens).toEqual([
    { label: 'a/board', values: [100, 300, 0] },
    { label: 'b/docs', values: [0, 50, 0] },
  ]);
  expect(series.runs).toEqual([2, 5, 0]);
  expect(series.failed).toEqual([0, 2, 0]);
  expect(series.failureRatio).toEqual([0, 0.4, null]);
});

it('no rows, no points', () => {
  expect(usageSeries([])).toEqual({ days: [], tokens: [], runs: [], failed: [], failureRatio: [] });
});
