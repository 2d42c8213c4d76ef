// `npm run bench:budget`: the runner's budget meter (src/agent/budget-meter.ts) against
// issue 31's target. A benchmark, not a test: it prints figures beside the target and never
// fails on them.
//
// The meter runs on every usage report of the ACP session, so it must stay cheap: the target
// is ≤ 50 µs per report. The set-up is the expensive end of what a Workflow can ask for: all
// four scopes with a token and a cost limit each (never crossed, so every report checks them
// all), a price table of 200 models, and model ids that only match by prefix (the exact
// look-up misses, then every id of the table is tried). Reports alternate between a turn's
// token counts (turnEnded) and the agent's cumulative cost (costReported).
//
//   BENCH_REPORTS  usage reports metered                  (1000000)
//   BENCH_MODELS   models in the price table              (200)
import { performance } from 'node:perf_hooks';
import { createBudgetMeter, type BudgetMeter } from '../src/agent/budget-meter.js';
import type { ModelPrice, PriceTable, RunBudget } from '../src/workflow/budget.js';
import { say } from './report.js';

const TARGET_US = 50;

const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  return Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
};
const percentile = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

function priceTable(models: number): PriceTable {
  const table: Record<string, ModelPrice> = {};
  for (let index = 0; index < models; index += 1) {
    table[`vendor-model-${index}`] = { input: 1 + index / 100, cachedInput: 0.1, output: 5 };
  }
  return { currency: 'USD', models: table };
}

function runBudget(models: number): RunBudget {
  // High enough that 1e6 reports never cross a limit or its warn ratio: every report is
  // checked against all eight limits, the meter's longest path.
  const limit = { tokens: 1_000_000_000_000, cost: '900000000000' };
  return {
    limits: {
      attempt: limit,
      run: limit,
      issue: limit,
      day: limit,
      warnRatio: 0.8,
      timeZone: 'UTC',
    },
    spentBefore: {
      run: { tokens: 1000, cost: 0.5 },
      issue: { tokens: 5000, cost: 2 },
      day: { tokens: 100_000, cost: 40 },
    },
    day: '2026-12-03',
    prices: priceTable(models),
  };
}

interface Timings {
  all: Float64Array;
  turns: Float64Array;
  costs: Float64Array;
}

function meter(reports: number, models: number): Timings {
  const budget: BudgetMeter = createBudgetMeter(runBudget(models));
  // Dated ids, as agents report them: found by the longest prefix, not exactly.
  const ids = Array.from({ length: 16 }, (_, index) => `vendor-model-${index * 12}-20251001`);
  const all = new Float64Array(reports);
  const turns = new Float64Array(Math.ceil(reports / 2));
  const costs = new Float64Array(Math.floor(reports / 2));
  let cost = 0;
  let sink = 0;
  for (let index = 0; index < reports; index += 1) {
    const start = performance.now();
    if (index % 2 === 0) {
      const verdict = budget.turnEnded(
        { inputTokens: 900, outputTokens: 100, totalTokens: 1000, cachedReadTokens: 300 },
        ids[index % ids.length],
      );
      sink += verdict.warnings.length;
    } else {
      cost += 0.001;
      sink += budget.costReported({ amount: cost, currency: 'USD' }).warnings.length;
    }
    const elapsed = (performance.now() - start) * 1000;
    all[index] = elapsed;
    if (index % 2 === 0) turns[index / 2] = elapsed;
    else costs[(index - 1) / 2] = elapsed;
  }
  if (sink !== 0 || budget.attemptSpend().tokens !== turns.length * 1000) {
    throw new Error('the meter warned or lost tokens: the set-up is not what is measured');
  }
  return { all, turns, costs };
}

/** What timing an empty body costs: the floor under every figure below. */
function timerOverhead(samples: number): number {
  const times = new Float64Array(samples);
  for (let index = 0; index < samples; index += 1) {
    const start = performance.now();
    times[index] = (performance.now() - start) * 1000;
  }
  return times.reduce((sum, value) => sum + value, 0) / samples;
}

function row(name: string, values: Float64Array): string {
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  const sorted = Float64Array.from(values).sort();
  const p99 = percentile(sorted, 99);
  return `| ${name} | ${values.length} | ${mean.toFixed(2)} | ${percentile(sorted, 50).toFixed(2)} | ${p99.toFixed(2)} | ${sorted[sorted.length - 1]!.toFixed(1)} | ≤ ${TARGET_US} µs | ${(p99 / TARGET_US).toFixed(3)} |`;
}

const reports = envNumber('BENCH_REPORTS', 1_000_000);
const models = envNumber('BENCH_MODELS', 200);
say(`warming up, then metering ${reports} reports against ${models} priced models`);
meter(Math.min(reports, 20_000), models);
const timings = meter(reports, models);
const overhead = timerOverhead(100_000);

console.log(
  `\n## Budget meter: cost per usage report (4 scopes × tokens and cost, ${models} priced models)\n`,
);
console.log('| reports | n | mean µs | p50 µs | p99 µs | max µs | target | p99 / target |');
console.log('|---|---:|---:|---:|---:|---:|---|---:|');
console.log(row('all', timings.all));
console.log(row('turnEnded (priced by prefix)', timings.turns));
console.log(row('costReported', timings.costs));
console.log(
  `\nTimer overhead (performance.now() twice, included above): ${overhead.toFixed(2)} µs a sample.`,
);
