import { Liquid } from 'liquidjs';
import type { EnsembleContext } from '../../template/ensemble.js';
import { issueTemplateView } from '../../template/issue-view.js';
import { templateError } from '../../template/liquid-errors.js';
import { TEMPLATE_LIMITS } from '../../template/limits.js';
import type { ReviewPromptContext } from '../../template/review-context.js';
import type { Issue } from '../../workflow/issue.js';

/**
 * The prompt of a review round: review.continuation_prompt over the issue, the attempt and
 * the round's feedback (`review`, `checks`). The one place the issuerun controller renders
 * it; the template layer's renderReviewPrompt takes its place once it is there. Strict as
 * the first prompt, with no file system; reviewer text is a value, never parsed.
 */
const engine = new Liquid({
  strictVariables: true,
  strictFilters: true,
  globals: {},
  ownPropertyOnly: true,
  templates: {},
  ...TEMPLATE_LIMITS,
});

export function renderRoundPrompt(
  template: string,
  context: {
    issue: Issue;
    attempt: number | null;
    ensemble: EnsembleContext;
  } & ReviewPromptContext,
  renderLimitMs?: number,
): string {
  const scope = {
    issue: issueTemplateView(context.issue),
    attempt: context.attempt,
    ensemble: { ...context.ensemble },
    review: context.review,
    checks: context.checks,
  };
  try {
    const parsed = engine.parse(template);
    const options = renderLimitMs === undefined ? undefined : { renderLimit: renderLimitMs };
    return engine.renderSync(parsed, scope, options) as string;
  } catch (error) {
    throw templateError('template_render_error', error, template, renderLimitMs);
  }
}
