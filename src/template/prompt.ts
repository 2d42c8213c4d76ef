import type { Template } from 'liquidjs';
import type { Issue } from '../workflow/issue.js';
import { issueTemplateView } from './issue-view.js';
import { templateError } from './liquid-errors.js';
import type { EnsembleContext } from './ensemble.js';
import { cachedParser, strictEngine } from './engine.js';

export { continuationPrompt } from './continuation.js';
export { steeringBlock, STEERING_BEGIN, STEERING_END, type SteerText } from './steering.js';
export { type EnsembleContext, ensembleContext, soloEnsemble } from './ensemble.js';

export interface PromptContext {
  issue: Issue;
  /** The retry attempt of this dispatch, or null when there is no attempt counter. */
  attempt: number | null;
  ensemble: EnsembleContext;
}

/**
 * The prompt engine: stock liquidjs in strict mode, so a typo in a variable or a filter is an
 * error rather than an empty string. `templates: {}` gives it an empty file system, so
 * `{% include %}` and `{% render %}` cannot read files off the machine that renders.
 */
const promptEngine = strictEngine();

/** Parse (or fetch the cached parse of) a prompt template; throws `template_parse_error`. */
export const parsePromptTemplate: (template: string) => Template[] = cachedParser(promptEngine);

/**
 * Render a template with the prompt engine over `scope` (the caller builds it from plain
 * data: every value is rendered as text, never parsed). Throws `template_parse_error` or
 * `template_render_error` with liquidjs's message. Other prompt-like templates (the review
 * ones, src/template/review.ts) render through this, so there is one strict engine.
 */
export function renderWithPromptEngine(
  template: string,
  scope: Record<string, unknown>,
  renderLimitMs?: number,
): string {
  const parsed = parsePromptTemplate(template);
  try {
    const options = renderLimitMs === undefined ? undefined : { renderLimit: renderLimitMs };
    return promptEngine.renderSync(parsed, scope, options) as string;
  } catch (error) {
    throw templateError('template_render_error', error, template, renderLimitMs);
  }
}

/** The `issue`, `attempt` and `ensemble` a prompt sees, as template values. */
export function promptScope(context: PromptContext): Record<string, unknown> {
  return {
    issue: issueTemplateView(context.issue),
    attempt: context.attempt,
    ensemble: { ...context.ensemble },
  };
}

/**
 * Render the first-turn prompt. The context is exactly `{ issue, attempt, ensemble }`;
 * throws `template_parse_error` or `template_render_error` with liquidjs's message.
 * `renderLimitMs` lowers the time one render may take (the controller's budget).
 */
export function renderPrompt(
  template: string,
  context: PromptContext,
  renderLimitMs?: number,
): string {
  return renderWithPromptEngine(template, promptScope(context), renderLimitMs);
}
