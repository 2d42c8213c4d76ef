import { LorenzError } from '../workflow/errors.js';
import { describeLimit } from './limits.js';

/**
 * Turn a liquidjs failure into a LorenzError that keeps liquidjs's own message
 * (e.g. `undefined variable: issue.nope, line:1, col:6`), which is what users see.
 */
export function templateError(
  code: 'template_parse_error' | 'template_render_error',
  error: unknown,
  template: string,
  renderLimitMs?: number,
): LorenzError {
  const message = describeLimit(
    error instanceof Error ? error.message : String(error),
    renderLimitMs,
  );
  return new LorenzError(code, message, { template });
}
