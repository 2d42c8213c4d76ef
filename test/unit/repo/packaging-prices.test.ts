// The price table the chart and config/ ship (docs/budgets.md): it must parse with the
// controller's own parser, config/'s copy must be the chart's default, and both must pass it
// to the controller by the name they give the ConfigMap. (The rendered chart is checked with
// the real helm by the chart's integration tests.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { PRICE_TABLE_KEY } from '../../../src/workflow/budget.js';
import { PriceTableError, parsePriceTable } from '../../../src/workflow/price-table.js';

const root = join(import.meta.dirname, '../../..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

interface PricesValues {
  enabled: boolean;
  currency: string;
  models: Record<string, unknown>;
}
const values = (parse(read('charts/lorenz/values.yaml')) as { prices: PricesValues }).prices;

const configDocs = parseAllDocuments(read('config/manager/manager.yaml')).map(
  (doc) => doc.toJS() as Record<string, unknown>,
);
const configMap = configDocs.find(
  (doc) => doc.kind === 'ConfigMap' && (doc.metadata as { name: string }).name === 'lorenz-prices',
) as { metadata: { namespace: string }; data: Record<string, string> } | undefined;

describe('the price table of the chart and config/', () => {
  it('is on by default in the chart, with a table the controller parses', () => {
    expect(values.enabled).toBe(true);
    // What templates/prices.yaml writes under prices.yaml: currency and models, as YAML.
    const text = stringify({ currency: values.currency, models: values.models });
    const table = parsePriceTable(text, 'charts/lorenz/values.yaml prices');
    expect(table.currency).toBe('USD');
    expect({ ...table.models }).toEqual({
      'claude-sonnet-4-5': { input: 3, cachedInput: 0.3, output: 15 },
      'claude-opus-4-1': { input: 15, cachedInput: 1.5, output: 75 },
      'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
    });
  });

  it("config/manager ships the chart's default table as ConfigMap lorenz-prices", () => {
    expect(configMap?.metadata.namespace).toBe('lorenz-system');
    const text = configMap?.data[PRICE_TABLE_KEY] ?? '';
    const table = parsePriceTable(text, 'config/manager/manager.yaml');
    expect(table).toEqual(
      parsePriceTable(stringify({ currency: values.currency, models: values.models }), 'values'),
    );
  });

  it('passes the ConfigMap to the controller by the name it is given', () => {
    const template = read('charts/lorenz/templates/prices.yaml');
    expect(template).toContain('name: {{ include "lorenz.fullname" . }}-prices');
    expect(template).toContain(`${PRICE_TABLE_KEY}: |`);
    expect(template).toMatch(/^\{\{- if \.Values\.prices\.enabled \}\}/);
    const deployment = read('charts/lorenz/templates/deployment.yaml');
    expect(deployment).toMatch(
      /\{\{- if \.Values\.prices\.enabled \}\}\n\s+- --price-table=\{\{ include "lorenz\.fullname" \. \}\}-prices\n\s+\{\{- end \}\}/,
    );
    const manager = configDocs.find((doc) => doc.kind === 'Deployment') as {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    expect(manager.spec.template.spec.containers[0]!.args).toContain('--price-table=lorenz-prices');
  });

  it('would catch a broken table in values.yaml', () => {
    const broken = stringify({ currency: values.currency, models: { x: { input: 'free' } } });
    expect(() => parsePriceTable(broken, 'values')).toThrow(PriceTableError);
  });
});
