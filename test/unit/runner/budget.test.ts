import { describe, expect, it } from 'vitest';
import { readRunBudget } from '../../../src/runner/budget.js';

const good = {
  limits: { attempt: { tokens: 10 }, warnRatio: 0.8, timeZone: 'UTC' },
  spentBefore: { run: { tokens: 0 }, issue: { tokens: 0 }, day: { tokens: 0, cost: 1 } },
  day: '2026-12-03',
};

describe('readRunBudget', () => {
  it.each([
    ['absent: no budget', {}, undefined],
    ['empty: no budget', { LORENZ_BUDGET: '' }, undefined],
    ['the JSON the controller wrote', { LORENZ_BUDGET: JSON.stringify(good) }, good],
  ] as const)('%s', (_name, env, want) => {
    expect(readRunBudget(env)).toEqual(want);
  });

  it.each([
    ['not JSON', '{limits', 'LORENZ_BUDGET is not JSON'],
    [
      'a limit of 0',
      JSON.stringify({ ...good, limits: { ...good.limits, run: { tokens: 0 } } }),
      'LORENZ_BUDGET: limits.run.tokens',
    ],
    [
      'a spend that is a string',
      JSON.stringify({ ...good, spentBefore: { ...good.spentBefore, run: { tokens: 'lots' } } }),
      'LORENZ_BUDGET: spentBefore.run.tokens',
    ],
  ])('%s: a clear error naming where', (_name, text, message) => {
    expect(() => readRunBudget({ LORENZ_BUDGET: text })).toThrow(message);
  });
});
