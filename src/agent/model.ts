import type { acp } from './client.js';

/**
 * The model the agent works with, as ACP says it: the current value of the session config
 * option of category `model` (session/new's configOptions, then config_option_update).
 * Agents that do not say leave it undefined, and cost is then unknown (docs/budgets.md).
 */
export function modelOf(
  options: readonly acp.SessionConfigOption[] | null | undefined,
): string | undefined {
  for (const option of options ?? []) {
    if (option.category === 'model' && option.type === 'select' && option.currentValue) {
      return String(option.currentValue).slice(0, 256);
    }
  }
  return undefined;
}
