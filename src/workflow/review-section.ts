import { reviewSection } from './config-schema.js';
import { type ConfigProblem, isMap, parseSection } from './config-sections.js';
import type { ReviewConfig } from './review-config.js';

/**
 * The `review:` section: absent is null (no pull requests); present, even empty (`review:`
 * with nothing under it), opts in with every default. It needs `workspace.git`, since the
 * pull request is opened for the issue branch of the clone. Its templates are Liquid and are
 * parsed at load by the template layer (src/template/review.ts), which this layer cannot import.
 */
export function parseReviewSection(
  value: unknown,
  workspace: { git?: unknown } | undefined,
  context: { warnings: string[]; problems: ConfigProblem[] },
): ReviewConfig | null {
  if (value === undefined) return null;
  if (value !== null && !isMap(value)) {
    context.problems.push({ path: 'review', rule: 'must be a map' });
    return null;
  }
  // Only when workspace itself parsed: otherwise its own problem is the one to report.
  if (workspace && workspace.git === undefined) {
    context.problems.push({
      path: 'review',
      rule: 'needs workspace.git: the pull request is opened for the issue branch of a git workspace',
    });
  }
  const review = parseSection(reviewSection, value ?? {}, 'review', context);
  if (!review) return null;
  return {
    host: review.host,
    // Trailing slashes dropped, so clients can join paths onto it.
    apiUrl: review.api_url === null ? null : review.api_url.trim().replace(/\/+$/, ''),
    prTitle: review.pr_title,
    prBody: review.pr_body,
    draft: review.draft,
    maxRounds: review.max_rounds,
    onApproved: review.on_approved,
    onMerged: review.on_merged,
    requiredChecks: review.required_checks,
    continuationPrompt: review.continuation_prompt,
    pollIntervalMs: review.poll_interval_ms,
  };
}
