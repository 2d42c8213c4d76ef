import { Liquid } from 'liquidjs';
import { LorenzError, errorMessage } from '../workflow/errors.js';
import type { Issue } from '../workflow/issue.js';
import { issueTemplateView } from './issue-view.js';
import { TEMPLATE_LIMITS, describeLimit } from './limits.js';
import { DEFERRED_LOCALE, deferLocale } from './locale.js';

/**
 * Short names rendered from a Workflow: the issue's git branch (`workspace.git.branch`) and
 * a clone address from a short `owner/name` (`workspace.git.repo_template`). Strict like the
 * prompt engine, with no escaping (the result is a name, never shell text) and one filter of
 * its own, `slug`.
 */

/** Longest slug `slug` yields: a title can be a paragraph, a branch name should not be. */
export const SLUG_MAX_LENGTH = 48;

/** Lower-case ASCII words joined by `-`: accents dropped, anything else a separator. */
export function slugify(value: unknown): string {
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : '';
  const words = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  let slug = '';
  for (const word of words) {
    const next = slug === '' ? word : `${slug}-${word}`;
    if (next.length > SLUG_MAX_LENGTH) break;
    slug = next;
  }
  // A first word longer than the limit is cut rather than dropped.
  return slug === '' && words[0] ? words[0].slice(0, SLUG_MAX_LENGTH) : slug;
}

const namesEngine = deferLocale(
  new Liquid({
    strictVariables: true,
    strictFilters: true,
    ownPropertyOnly: true,
    templates: {},
    ...TEMPLATE_LIMITS,
    ...DEFERRED_LOCALE,
  }),
);
namesEngine.registerFilter('slug', slugify);

type NameError = 'workspace_branch_unresolved' | 'workspace_repo_no_clone_address';

function render(
  template: string,
  scope: Record<string, unknown>,
  code: NameError,
  what: string,
): string {
  try {
    return namesEngine.parseAndRenderSync(template, scope) as string;
  } catch (error) {
    throw new LorenzError(
      code,
      `${code}: ${what} ${JSON.stringify(template)}: ${describeLimit(errorMessage(error))}`,
    );
  }
}

/** The issue's branch from `workspace.git.branch`, trimmed; validity is checked by the caller. */
export function renderBranchTemplate(template: string, issue: Issue): string {
  return render(
    template,
    { issue: issueTemplateView(issue) },
    'workspace_branch_unresolved',
    'workspace.git.branch',
  ).trim();
}

/** A clone address from `workspace.git.repo_template` and a short `owner/name`. */
export function renderRepoTemplate(template: string, repo: string): string {
  const [owner = '', name = ''] = repo.split('/');
  return render(
    template,
    { repo, owner, name },
    'workspace_repo_no_clone_address',
    'workspace.git.repo_template',
  ).trim();
}
