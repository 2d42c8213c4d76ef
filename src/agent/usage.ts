import type { TokenUsage } from '../workflow/events.js';
import type { acp } from './client.js';

/**
 * Token counts arrive per turn in PromptResponse.usage (ACP's usage_update carries only the
 * context window fill, not counts). The rest of the system is always told the session's
 * cumulative total, so turns are summed here.
 */
export function addTurnUsage(
  total: TokenUsage | undefined,
  turn: acp.Usage | null | undefined,
): TokenUsage | undefined {
  if (!turn) return total;
  const base = total ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  const cached = (base.cachedInputTokens ?? 0) + (turn.cachedReadTokens ?? 0);
  return {
    inputTokens: base.inputTokens + turn.inputTokens,
    outputTokens: base.outputTokens + turn.outputTokens,
    totalTokens: base.totalTokens + turn.totalTokens,
    ...(cached > 0 ? { cachedInputTokens: cached } : {}),
  };
}
