import type { TokenUsage } from './events.js';

/**
 * A usage as a run record carries it (turn_completed, turn_failed, the termination summary),
 * read back by the controller: counts must be whole and not negative, a cost a decimal
 * string; what does not fit is dropped rather than written into a status the API refuses.
 */
export function parseTokenUsage(value: unknown): TokenUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const count = (key: string): number => {
    const n = record[key];
    return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 0;
  };
  const usage: TokenUsage = {
    inputTokens: count('inputTokens'),
    outputTokens: count('outputTokens'),
    totalTokens: count('totalTokens'),
  };
  const cached = count('cachedInputTokens');
  if (cached > 0) usage.cachedInputTokens = cached;
  const { cost, currency, model } = record;
  if (typeof cost === 'string' && /^\d{1,12}(\.\d{1,9})?$/.test(cost)) {
    usage.cost = cost;
    if (typeof currency === 'string' && currency.length > 0 && currency.length <= 16)
      usage.currency = currency;
  }
  if (typeof model === 'string' && model.length > 0) usage.model = model.slice(0, 256);
  return usage;
}
