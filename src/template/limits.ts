/**
 * Bounds on the work one template may cause, for both engines (liquidjs's DoS options).
 * A Workflow is written by users and rendered by the controller for every run: no template
 * may pin its CPU or memory.
 */
export const TEMPLATE_LIMITS = {
  /**
   * Characters parsed in one parse: far beyond any real prompt or hook. liquidjs parses
   * tag-dense text in worse than linear time (`npm run bench:limits`: 0.3 s at 256 KiB,
   * 4.5 s at 1 MB, 13 s at 2 MB, about 4 min at 10 MB), so the cap is what bounds it.
   */
  parseLimit: 262_144,
  /** Milliseconds one render may take. */
  renderLimit: 1_000,
  /**
   * Units of memory (array items, string characters) one render may allocate: 10 M, about
   * 20 MB of text. Also what stops `(1..100000000)` before it is built.
   */
  memoryLimit: 10_000_000,
} as const;

/** What a limit error says, with the limit it hit (`renderLimitMs`: the one the render had). */
export function describeLimit(
  message: string,
  renderLimitMs: number = TEMPLATE_LIMITS.renderLimit,
): string {
  if (message.startsWith('parse length limit exceeded')) {
    return `${message}: a template may have at most ${TEMPLATE_LIMITS.parseLimit} characters`;
  }
  if (message.startsWith('template render limit exceeded')) {
    return `${message}: a template may render for at most ${renderLimitMs} ms`;
  }
  if (message.startsWith('memory alloc limit exceeded')) {
    return `${message}: a template may allocate at most ${TEMPLATE_LIMITS.memoryLimit} units (characters or items)`;
  }
  return message;
}
