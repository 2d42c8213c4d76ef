import { LorenzError, isLorenzError } from '../workflow/errors.js';
import type { Issue } from '../workflow/issue.js';
import type { ReviewConfig } from '../workflow/review-config.js';
import { issueTemplateView } from './issue-view.js';
import {
  type PromptContext,
  parsePromptTemplate,
  promptScope,
  renderWithPromptEngine,
} from './prompt.js';
import type {
  PullRequestTextContext,
  ReviewPromptCheck,
  ReviewPromptComment,
  ReviewPromptContext,
} from './review-context.js';

/**
 * The templates of the `review:` section (docs/review-prompts.md): the pull request's title
 * and body, and the prompt of a review round. They render with the strict prompt engine;
 * everything a reviewer or a check wrote reaches them as a value, so it is printed as text and
 * never parsed as Liquid.
 */

/** Hosts cap titles (GitHub at 256 characters); a longer one is cut with an ellipsis. */
export const PR_TITLE_MAX_LENGTH = 256;
/** Below GitHub's 65536 and GitLab's 1 MB limits, with room for what hosts add. */
export const PR_BODY_MAX_LENGTH = 60_000;
const BODY_CUT_NOTE = '\n\n… (cut by Lorenz at 60000 characters)';

type ReviewTemplateKey = 'pr_title' | 'pr_body' | 'continuation_prompt';

const TEMPLATE_FIELDS = {
  pr_title: 'prTitle',
  pr_body: 'prBody',
  continuation_prompt: 'continuationPrompt',
} as const satisfies Record<ReviewTemplateKey, keyof ReviewConfig>;

/** Run a parse or render, naming the key (`review.pr_body: …`) in any template error. */
function naming<T>(key: ReviewTemplateKey, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (!isLorenzError(error)) throw error;
    const path = `review.${key}`;
    throw new LorenzError(error.code, `${path}: ${error.message}`, { ...error.detail, path });
  }
}

/** Parse every review template, so a broken one fails the WORKFLOW.md at load. */
export function parseReviewTemplates(config: ReviewConfig): void {
  for (const [key, field] of Object.entries(TEMPLATE_FIELDS) as [
    ReviewTemplateKey,
    (typeof TEMPLATE_FIELDS)[ReviewTemplateKey],
  ][]) {
    naming(key, () => parsePromptTemplate(config[field]));
  }
}

/** Cut `text` to at most `max` UTF-16 units ending with `marker`, never inside a surrogate pair. */
function bounded(text: string, max: number, marker: string): string {
  if (text.length <= max) return text;
  let cut = max - marker.length;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return text.slice(0, cut) + marker;
}

/**
 * The pull request's title and body. The title is made one line (every run of whitespace one
 * space), trimmed and cut to 256 characters; a title that renders empty is an error, since no
 * host accepts one. The body is cut to 60000 characters.
 */
export function renderPullRequestText(
  config: ReviewConfig,
  context: { issue: Issue } & PullRequestTextContext,
  renderLimitMs?: number,
): { title: string; body: string } {
  const scope = {
    issue: issueTemplateView(context.issue),
    branch: context.branch,
    base: context.base,
    summary: context.summary,
  };
  const rawTitle = naming('pr_title', () =>
    renderWithPromptEngine(config.prTitle, scope, renderLimitMs),
  );
  const title = rawTitle.replace(/\s+/g, ' ').trim();
  if (title === '') {
    throw new LorenzError('template_render_error', 'review.pr_title: renders to an empty title', {
      path: 'review.pr_title',
      template: config.prTitle,
    });
  }
  const body = naming('pr_body', () => renderWithPromptEngine(config.prBody, scope, renderLimitMs));
  return {
    title: bounded(title, PR_TITLE_MAX_LENGTH, '…'),
    body: bounded(body, PR_BODY_MAX_LENGTH, BODY_CUT_NOTE),
  };
}

const commentView = (comment: ReviewPromptComment): ReviewPromptComment => ({
  path: comment.path ?? null,
  line: comment.line ?? null,
  author: comment.author ?? null,
  body: comment.body,
});

const checkView = (check: ReviewPromptCheck): ReviewPromptCheck => ({
  name: check.name,
  conclusion: check.conclusion ?? null,
  output: check.output ?? null,
  url: check.url ?? null,
});

/**
 * The prompt of a review round: `review.continuation_prompt` over the issue, attempt and
 * ensemble of a first-turn prompt plus `review` and `checks`. Values are copied into plain
 * objects with every key present, so strict mode fails only on names that do not exist.
 */
export function renderReviewPrompt(
  config: ReviewConfig,
  context: PromptContext & ReviewPromptContext,
  renderLimitMs?: number,
): string {
  const { review, checks } = context;
  const scope = {
    ...promptScope(context),
    review: {
      round: review.round,
      max_rounds: review.max_rounds,
      state: review.state,
      pull_request: { ...review.pull_request },
      comments: review.comments.map(commentView),
    },
    checks: { failed: checks.failed.map(checkView) },
  };
  return naming('continuation_prompt', () =>
    renderWithPromptEngine(config.continuationPrompt, scope, renderLimitMs),
  );
}
