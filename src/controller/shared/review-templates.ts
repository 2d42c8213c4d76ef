import { Liquid } from 'liquidjs';
import type { EnsembleContext } from '../../template/ensemble.js';
import { issueTemplateView } from '../../template/issue-view.js';
import { templateError } from '../../template/liquid-errors.js';
import { TEMPLATE_LIMITS } from '../../template/limits.js';
import type { PullRequestTextContext, ReviewPromptContext } from '../../template/review-context.js';
import type { Issue } from '../../workflow/issue.js';

/**
 * The review loop's templates, rendered in one place for both controllers (the template
 * layer's renderReviewPrompt / renderPullRequestText take its place once they are there):
 * strict as the first prompt, with no file system; reviewer text is a value, never parsed.
 */
const engine = new Liquid({
  strictVariables: true,
  strictFilters: true,
  globals: {},
  ownPropertyOnly: true,
  templates: {},
  ...TEMPLATE_LIMITS,
});

/** A review round's prompt: review.continuation_prompt over the issue and the round's feedback. */
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

/** A new pull request's title and body (review.pr_title, review.pr_body) over the issue. */
export function renderPullRequestText(
  templates: { prTitle: string; prBody: string },
  issue: Issue,
  context: PullRequestTextContext,
): { title: string; body: string } {
  const scope = { issue: issueTemplateView(issue), pull_request: { ...context } };
  const render = (template: string): string => {
    try {
      return engine.renderSync(engine.parse(template), scope) as string;
    } catch (error) {
      throw templateError('template_render_error', error, template);
    }
  };
  return { title: render(templates.prTitle).trim(), body: render(templates.prBody) };
}
