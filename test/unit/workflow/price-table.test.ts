import { describe, expect, it } from 'vitest';
import {
  MAX_PRICED_MODELS,
  PriceTableError,
  parsePriceTable,
} from '../../../src/workflow/price-table.js';

const SOURCE = 'ConfigMap lorenz/lorenz-prices';

function refusal(text: string): PriceTableError {
  try {
    parsePriceTable(text, SOURCE);
  } catch (error) {
    if (error instanceof PriceTableError) return error;
    throw error;
  }
  throw new Error('expected parsePriceTable to fail');
}

describe('parsePriceTable', () => {
  it('reads a good table, prices per million tokens', () => {
    const table = parsePriceTable(
      [
        'currency: USD',
        'models:',
        '  claude-sonnet-4-5: { input: 3, cachedInput: 0.3, output: 15 }',
        '  gpt-5:',
        '    input: 1.25',
        '    output: 10',
      ].join('\n'),
      SOURCE,
    );
    expect(table.currency).toBe('USD');
    expect({ ...table.models }).toEqual({
      'claude-sonnet-4-5': { input: 3, cachedInput: 0.3, output: 15 },
      'gpt-5': { input: 1.25, output: 10 },
    });
  });

  it('takes a table with no models (tokens only for every model)', () => {
    expect({ ...parsePriceTable('currency: EUR', SOURCE).models }).toEqual({});
  });

  it('does not let a model id named like an Object property be found by accident', () => {
    const table = parsePriceTable('currency: USD\nmodels: {}', SOURCE);
    expect(Object.hasOwn(table.models, 'toString')).toBe(false);
    expect('toString' in table.models).toBe(false);
  });

  it.each<[string, string, string]>([
    [
      'a negative price',
      'currency: USD\nmodels:\n  gpt-5: { input: 1.25, output: -10 }',
      'models.gpt-5.output: must not be negative, got -10',
    ],
    [
      'a price that is not a number',
      'currency: USD\nmodels:\n  gpt-5: { input: 1.25, output: "3 dollars" }',
      'models.gpt-5.output: must be a number (per million tokens), got "3 dollars"',
    ],
    [
      'an unknown price key',
      'currency: USD\nmodels:\n  gpt-5: { input: 1, output: 2, cached: 0.1 }',
      'models.gpt-5.cached: unknown key (known: input, cachedInput, output)',
    ],
    [
      'an unknown top-level key',
      'currency: USD\nprices: {}',
      'prices: unknown key (known: currency, models)',
    ],
    [
      'a missing output price',
      'currency: USD\nmodels:\n  gpt-5: { input: 1 }',
      'models.gpt-5: input and output prices are required',
    ],
    [
      'a model that is not a map',
      'currency: USD\nmodels:\n  gpt-5: 3',
      'models.gpt-5: must be a map of prices',
    ],
    ['a missing currency', 'models: {}', 'currency: must be a code such as USD, got undefined'],
    ['a currency that is not a code', 'currency: "$ US"', 'currency: must be a code such as USD'],
    ['models that are not a map', 'currency: USD\nmodels: [a, b]', 'models: must be a map'],
    ['a list instead of a map', '- currency: USD', 'must be a map with currency and models'],
    ['a plain string', 'just some words', 'must be a map with currency and models'],
    ['text that is not YAML', 'currency: USD\n  models: : [', 'not YAML'],
  ])('refuses %s, naming where', (_name, text, problem) => {
    const error = refusal(text);
    expect(error.code).toBe('invalid_workflow_config');
    expect(error.message).toContain(`invalid price table ${SOURCE}: ${problem}`);
  });

  it(`refuses more than ${MAX_PRICED_MODELS} models`, () => {
    const lines = ['currency: USD', 'models:'];
    for (let i = 0; i <= MAX_PRICED_MODELS; i++) lines.push(`  m${i}: { input: 1, output: 2 }`);
    expect(refusal(lines.join('\n')).message).toContain(
      `models: ${MAX_PRICED_MODELS + 1} models, at most ${MAX_PRICED_MODELS}`,
    );
  });
});
