import { describe, expect, it } from 'vitest';
import {
  type TurnUsageReport,
  costOf,
  createBudgetMeter,
  formatAmount,
  priceFor,
} from '../../../src/agent/budget-meter.js';
import type { BudgetLimits, PriceTable, RunBudget } from '../../../src/workflow/budget.js';
import { eachCase } from '../../support/cases.js';

const PRICES: PriceTable = {
  currency: 'USD',
  models: {
    'claude-sonnet-4-5': { input: 3, cachedInput: 0.3, output: 15 },
    claude: { input: 100, output: 100 },
    'gpt-5': { input: 1.25, output: 10 },
  },
};

const NOTHING = { tokens: 0 };

function budget(
  limits: Partial<BudgetLimits>,
  spentBefore: Partial<RunBudget['spentBefore']> = {},
  prices: PriceTable | null = PRICES,
): RunBudget {
  return {
    limits: { warnRatio: 0.8, timeZone: 'UTC', ...limits },
    spentBefore: { run: NOTHING, issue: NOTHING, day: NOTHING, ...spentBefore },
    day: '2026-12-03',
    ...(prices ? { prices } : {}),
  };
}

const turn = (totalTokens: number, extra: Partial<TurnUsageReport> = {}): TurnUsageReport => ({
  inputTokens: totalTokens,
  outputTokens: 0,
  totalTokens,
  ...extra,
});

describe('priceFor', () => {
  it.each<[string, string | undefined, number | undefined]>([
    ['an exact id', 'gpt-5', 1.25],
    ['the longest matching prefix', 'claude-sonnet-4-5-20250929', 3],
    ['a shorter prefix when only it matches', 'claude-opus-4-1', 100],
    ['no match', 'gemini-2.5-pro', undefined],
    ['no model', undefined, undefined],
    ['an Object.prototype name', 'constructor', undefined],
  ])('%s: %s', (_name, model, input) => {
    expect(priceFor(PRICES, model)?.input).toBe(input);
  });

  it('ignores Object.prototype names in a table that came through JSON', () => {
    const table = JSON.parse(JSON.stringify(PRICES)) as PriceTable;
    expect(priceFor(table, 'toString')).toBeUndefined();
    expect(priceFor(table, 'gpt-5')?.output).toBe(10);
  });

  it('has no price without a table', () => {
    expect(priceFor(undefined, 'gpt-5')).toBeUndefined();
  });
});

describe('costOf', () => {
  it('prices cached input at its own price, per million tokens', () => {
    const usage = {
      inputTokens: 1000,
      outputTokens: 100,
      totalTokens: 1100,
      cachedReadTokens: 400,
    };
    // 600 × 3 + 400 × 0.3 + 100 × 15 = 3420 per million
    expect(costOf(usage, { input: 3, cachedInput: 0.3, output: 15 })).toBeCloseTo(0.00342, 12);
  });

  it('prices cached input as input when the table has no cached price', () => {
    const usage = { inputTokens: 1000, outputTokens: 0, totalTokens: 1000, cachedReadTokens: 400 };
    expect(costOf(usage, { input: 2, output: 8 })).toBeCloseTo(0.002, 12);
  });

  it('never counts more cached tokens than input tokens', () => {
    const usage = { inputTokens: 10, outputTokens: 0, totalTokens: 10, cachedReadTokens: 50 };
    expect(costOf(usage, { input: 1e6, cachedInput: 0, output: 0 })).toBe(0);
  });
});

describe('createBudgetMeter: counting', () => {
  it('sums the tokens of every turn', () => {
    const meter = createBudgetMeter(budget({}));
    meter.turnEnded(turn(100), 'gpt-5');
    meter.turnEnded(turn(250), 'gpt-5');
    expect(meter.attemptSpend().tokens).toBe(350);
  });

  it('prices each turn from the table, matching model ids by prefix', () => {
    const meter = createBudgetMeter(budget({}));
    meter.turnEnded(
      { inputTokens: 1000, outputTokens: 100, totalTokens: 1100, cachedReadTokens: 400 },
      'claude-sonnet-4-5-20250929',
    );
    meter.turnEnded({ inputTokens: 0, outputTokens: 1000, totalTokens: 1000 }, 'gpt-5');
    expect(meter.costKnown()).toBe(true);
    expect(meter.attemptSpend().cost).toBeCloseTo(0.00342 + 0.01, 12);
  });

  it('counts an unknown model in tokens only', () => {
    const meter = createBudgetMeter(budget({ run: { cost: '1' } }));
    const verdict = meter.turnEnded(turn(5000), 'gemini-2.5-pro');
    expect(meter.costKnown()).toBe(false);
    expect(meter.attemptSpend()).toEqual({ tokens: 5000 });
    expect(verdict).toEqual({ warnings: [] });
  });

  it('counts tokens only when there is no price table', () => {
    const meter = createBudgetMeter(budget({}, {}, null));
    meter.turnEnded(turn(10), 'gpt-5');
    expect(meter.attemptSpend()).toEqual({ tokens: 10 });
    expect(meter.costKnown()).toBe(false);
  });

  it("uses the agent's cumulative cost when it is larger than the priced one", () => {
    const meter = createBudgetMeter(budget({}));
    meter.turnEnded({ inputTokens: 0, outputTokens: 1000, totalTokens: 1000 }, 'gpt-5'); // 0.01
    meter.costReported({ amount: 0.5, currency: 'USD' });
    expect(meter.attemptSpend().cost).toBe(0.5);
    meter.costReported({ amount: 0.75, currency: 'USD' });
    expect(meter.attemptSpend().cost).toBe(0.75);
  });

  it('keeps the priced cost when the agent reports less', () => {
    const meter = createBudgetMeter(budget({}));
    meter.costReported({ amount: 0.001, currency: 'USD' });
    meter.turnEnded({ inputTokens: 0, outputTokens: 1000, totalTokens: 1000 }, 'gpt-5'); // 0.01
    expect(meter.attemptSpend().cost).toBeCloseTo(0.01, 12);
  });

  it("knows the cost from the agent's report alone", () => {
    const meter = createBudgetMeter(budget({}));
    expect(meter.costKnown()).toBe(false);
    meter.costReported({ amount: 0.2, currency: 'USD' });
    expect(meter.costKnown()).toBe(true);
    expect(meter.attemptSpend()).toEqual({ tokens: 0, cost: 0.2 });
  });

  it('adds what was spent before to every scope but the attempt', () => {
    const meter = createBudgetMeter(
      budget(
        {},
        { run: { tokens: 10, cost: 1 }, issue: { tokens: 100 }, day: { tokens: 1000, cost: 3 } },
      ),
    );
    meter.turnEnded(turn(5), 'unknown-model');
    expect(meter.spend('attempt')).toEqual({ tokens: 5 });
    expect(meter.spend('run')).toEqual({ tokens: 15, cost: 1 });
    expect(meter.spend('issue')).toEqual({ tokens: 105 });
    expect(meter.spend('day')).toEqual({ tokens: 1005, cost: 3 });
    meter.costReported({ amount: 0.5, currency: 'USD' });
    expect(meter.spend('issue')).toEqual({ tokens: 105, cost: 0.5 });
    expect(meter.spend('day').cost).toBe(3.5);
  });
});

describe('createBudgetMeter: limits', () => {
  it.each<[string, Partial<BudgetLimits>, Partial<RunBudget['spentBefore']>, number]>([
    ['attempt', { attempt: { tokens: 100 } }, {}, 100],
    ['run', { run: { tokens: 150 } }, { run: { tokens: 50 } }, 150],
    ['issue', { issue: { tokens: 1000 } }, { issue: { tokens: 900 } }, 1000],
    ['day', { day: { tokens: 500 } }, { day: { tokens: 400 } }, 500],
  ])('stops on the %s token limit, spentBefore counted', (scope, limits, before, limit) => {
    const meter = createBudgetMeter(budget({ ...limits, warnRatio: 0.999 }, before));
    expect(meter.turnEnded(turn(98), 'gpt-5')).toEqual({ warnings: [] });
    expect(meter.turnEnded(turn(1), 'gpt-5').exceeded).toBeUndefined();
    const verdict = meter.turnEnded(turn(1), 'gpt-5');
    expect(verdict.exceeded).toEqual({
      scope,
      measure: 'tokens',
      limit,
      spent: limit,
      message: `${scope} tokens ${limit} of ${limit}`,
    });
  });

  it.each<[string, Partial<BudgetLimits>, Partial<RunBudget['spentBefore']>]>([
    ['attempt', { attempt: { cost: '0.5' } }, {}],
    ['run', { run: { cost: '1' } }, { run: { tokens: 0, cost: 0.5 } }],
    ['issue', { issue: { cost: '2' } }, { issue: { tokens: 0, cost: 1.5 } }],
    ['day', { day: { cost: '10' } }, { day: { tokens: 0, cost: 9.5 } }],
  ])("stops on the %s cost limit from the agent's own cost, mid-turn", (scope, limits, before) => {
    const meter = createBudgetMeter(budget(limits, before));
    expect(meter.costReported({ amount: 0.3, currency: 'USD' }).exceeded).toBeUndefined();
    const verdict = meter.costReported({ amount: 0.5, currency: 'USD' });
    expect(verdict.exceeded).toMatchObject({ scope, measure: 'cost' });
    expect(verdict.exceeded?.message).toMatch(
      new RegExp(`^${scope} cost 0?\\d+\\.\\d{4} of .* USD$`),
    );
  });

  it('stops on a cost limit from priced tokens', () => {
    const meter = createBudgetMeter(budget({ run: { cost: '0.02' } }));
    const out = (tokens: number) => ({ inputTokens: 0, outputTokens: tokens, totalTokens: tokens });
    expect(meter.turnEnded(out(1000), 'gpt-5').exceeded).toBeUndefined(); // 0.01
    const verdict = meter.turnEnded(out(1000), 'gpt-5'); // 0.02
    expect(verdict.exceeded).toMatchObject({ scope: 'run', measure: 'cost', limit: 0.02 });
    expect(verdict.exceeded?.spent).toBeCloseTo(0.02, 12);
    expect(verdict.exceeded?.message).toBe('run cost 0.0200 of 0.02 USD');
  });

  it('shows a limit with all its digits', () => {
    const meter = createBudgetMeter(budget({ attempt: { cost: '0.005' } }));
    expect(meter.costReported({ amount: 0.006, currency: 'USD' }).exceeded?.message).toBe(
      'attempt cost 0.0060 of 0.005 USD',
    );
  });

  it('reports the first limit crossed in BUDGET_SCOPES order, tokens before cost', () => {
    const meter = createBudgetMeter(
      budget(
        {
          attempt: { cost: '0.1' },
          run: { tokens: 10, cost: '0.1' },
          day: { tokens: 10 },
        },
        {},
      ),
    );
    meter.costReported({ amount: 0.05, currency: 'USD' });
    const verdict = meter.turnEnded(turn(20), 'unknown-model');
    expect(verdict.exceeded).toMatchObject({
      scope: 'run',
      measure: 'tokens',
      limit: 10,
      spent: 20,
    });
    const both = meter.costReported({ amount: 1, currency: 'USD' });
    expect(both.exceeded).toMatchObject({ scope: 'attempt', measure: 'cost', limit: 0.1 });
  });

  it('warns once at the warn ratio, then stops at the limit', () => {
    const meter = createBudgetMeter(budget({ run: { tokens: 1000 }, warnRatio: 0.5 }));
    expect(meter.turnEnded(turn(400), 'gpt-5')).toEqual({ warnings: [] });
    const warned = meter.turnEnded(turn(100), 'gpt-5');
    expect(warned.exceeded).toBeUndefined();
    expect(warned.warnings).toEqual([
      {
        scope: 'run',
        measure: 'tokens',
        limit: 1000,
        spent: 500,
        message: 'run tokens 500 of 1000',
      },
    ]);
    expect(meter.turnEnded(turn(100), 'gpt-5')).toEqual({ warnings: [] });
    expect(meter.turnEnded(turn(400), 'gpt-5').exceeded?.spent).toBe(1000);
  });

  it('warns for each limit reaching its ratio, each once', () => {
    const meter = createBudgetMeter(
      budget(
        { attempt: { tokens: 100, cost: '1' }, day: { tokens: 1000 } },
        { day: { tokens: 720 } },
      ),
    );
    const first = meter.turnEnded(turn(85), 'gpt-5');
    expect(first.warnings.map((w) => `${w.scope}/${w.measure}`)).toEqual([
      'attempt/tokens',
      'day/tokens',
    ]);
    const second = meter.costReported({ amount: 0.9, currency: 'USD' });
    expect(second.warnings.map((w) => `${w.scope}/${w.measure}`)).toEqual(['attempt/cost']);
    expect(meter.costReported({ amount: 0.95, currency: 'USD' }).warnings).toEqual([]);
  });

  it('has nothing to say without limits', () => {
    const meter = createBudgetMeter(budget({}));
    expect(meter.turnEnded(turn(1e8), 'gpt-5')).toEqual({ warnings: [] });
  });
});

describe('createBudgetMeter: reports it does not count', () => {
  it.each<[string, TurnUsageReport, RegExp]>([
    ['negative tokens', { inputTokens: -1, outputTokens: 0, totalTokens: 5 }, /negative/],
    ['NaN tokens', { inputTokens: 0, outputTokens: Number.NaN, totalTokens: 5 }, /non-numeric/],
    ['infinite tokens', { inputTokens: 0, outputTokens: 0, totalTokens: Infinity }, /non-numeric/],
    ['absurd tokens', turn(1e9 + 1), /1000000001 tokens in one turn/],
  ])('ignores a turn with %s', (_name, usage, reason) => {
    const meter = createBudgetMeter(budget({ attempt: { tokens: 10 } }));
    const verdict = meter.turnEnded(usage, 'gpt-5');
    expect(verdict.ignored).toMatch(reason);
    expect(verdict.exceeded).toBeUndefined();
    expect(meter.attemptSpend()).toEqual({ tokens: 0 });
    expect(meter.costKnown()).toBe(false);
  });

  it.each<[string, { amount: number; currency: string }, RegExp]>([
    ['a negative cost', { amount: -1, currency: 'USD' }, /cost -1/],
    ['a NaN cost', { amount: Number.NaN, currency: 'USD' }, /cost NaN/],
    ['a cost in another currency', { amount: 5, currency: 'EUR' }, /EUR.*USD/],
    ['a cost going backwards', { amount: 0.1, currency: 'USD' }, /went back from 0.4 to 0.1/],
  ])('ignores %s', (_name, cost, reason) => {
    const meter = createBudgetMeter(budget({ attempt: { cost: '0.2' } }));
    const before = reason.source.includes('went back') ? 0.4 : undefined;
    if (before !== undefined) meter.costReported({ amount: before, currency: 'USD' });
    const verdict = meter.costReported(cost);
    expect(verdict.ignored).toMatch(reason);
    expect(verdict.exceeded).toBeUndefined();
    expect(meter.attemptSpend().cost).toBe(before);
  });
});

describe('formatAmount', () => {
  eachCase('%d → %s', formatAmount, [
    [0, '0'],
    [1, '1'],
    [1.5, '1.5'],
    [0.1 + 0.2, '0.3'],
    [2.0000004, '2'],
    [0.0000006, '0.000001'],
  ]);
});
