import { parse as parseYaml } from 'yaml';
import { modelPriceSchema, type ModelPrice, type PriceTable } from './budget.js';
import { LorenzError } from './errors.js';

/**
 * The price table (docs/budgets.md): YAML in a ConfigMap the controller reads, e.g.
 *
 *   currency: USD
 *   models:
 *     claude-sonnet-4-5: { input: 3, cachedInput: 0.3, output: 15 }   # per million tokens
 *
 * Every problem is named with where it is (`models.gpt-5.output: …`), and a bad table is
 * refused whole: the controller keeps the last good one.
 */

/** More models than this is not a price table someone maintains by hand. */
export const MAX_PRICED_MODELS = 500;

const ALLOWED_TOP = ['currency', 'models'];
const ALLOWED_PRICE = ['input', 'cachedInput', 'output'];

export class PriceTableError extends LorenzError {
  constructor(source: string, problem: string) {
    super('invalid_workflow_config', `invalid price table ${source}: ${problem}`, { source });
    this.name = 'PriceTableError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parsePrice(model: string, value: unknown, source: string): ModelPrice {
  const where = `models.${model}`;
  if (!isRecord(value)) throw new PriceTableError(source, `${where}: must be a map of prices`);
  for (const key of Object.keys(value)) {
    if (!ALLOWED_PRICE.includes(key))
      throw new PriceTableError(
        source,
        `${where}.${key}: unknown key (known: ${ALLOWED_PRICE.join(', ')})`,
      );
  }
  for (const key of ALLOWED_PRICE) {
    const price = value[key];
    if (price === undefined) continue;
    if (typeof price !== 'number' || !Number.isFinite(price))
      throw new PriceTableError(
        source,
        `${where}.${key}: must be a number (per million tokens), got ${JSON.stringify(price)}`,
      );
    if (price < 0)
      throw new PriceTableError(source, `${where}.${key}: must not be negative, got ${price}`);
  }
  const parsed = modelPriceSchema.safeParse(value);
  if (!parsed.success)
    throw new PriceTableError(source, `${where}: input and output prices are required`);
  return parsed.data;
}

/** Parses the table's YAML; `source` names it in errors (`ConfigMap lorenz/lorenz-prices`). */
export function parsePriceTable(text: string, source: string): PriceTable {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new PriceTableError(
      source,
      `not YAML: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!isRecord(raw)) throw new PriceTableError(source, 'must be a map with currency and models');
  for (const key of Object.keys(raw)) {
    if (!ALLOWED_TOP.includes(key))
      throw new PriceTableError(source, `${key}: unknown key (known: ${ALLOWED_TOP.join(', ')})`);
  }
  const currency = raw.currency;
  if (typeof currency !== 'string' || !/^[A-Za-z][A-Za-z0-9_-]{0,15}$/.test(currency))
    throw new PriceTableError(
      source,
      `currency: must be a code such as USD, got ${JSON.stringify(currency)}`,
    );
  const models = raw.models ?? {};
  if (!isRecord(models))
    throw new PriceTableError(source, 'models: must be a map of model id to prices');
  const entries = Object.entries(models);
  if (entries.length > MAX_PRICED_MODELS)
    throw new PriceTableError(
      source,
      `models: ${entries.length} models, at most ${MAX_PRICED_MODELS}`,
    );
  const table: PriceTable = { currency, models: Object.create(null) as Record<string, ModelPrice> };
  for (const [model, value] of entries) table.models[model] = parsePrice(model, value, source);
  return table;
}
