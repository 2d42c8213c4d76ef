import { createBoundedCache, memoized } from '../workflow/bounded-cache.js';
import { LorenzError, isLorenzError } from '../workflow/errors.js';
import type { HookName } from '../workflow/events.js';
import type { Issue } from '../workflow/issue.js';
import { issueTemplateView } from './issue-view.js';
import { templateError } from './liquid-errors.js';
import { shellEscape } from './shell-escape.js';
import { cachedParser, strictEngine } from './engine.js';

export { shellEscape } from './shell-escape.js';

/**
 * The text a hook value stands for before quoting: null is empty, a number or boolean its
 * text, a list its items joined with commas (quoted afterwards as one word).
 */
function hookText(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return '';
    case 'object':
      if (value === null) return '';
      return Array.isArray(value) ? value.map(hookText).join(',') : JSON.stringify(value);
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'symbol':
    case 'function':
      return String(value);
  }
}

function quoteValue(value: unknown): string {
  return shellEscape(hookText(value));
}

/**
 * The hook engine: strict like the prompt engine, but every `{{ }}` is shell-quoted on the
 * way out. `| raw` opts out; `| shell_escape` quotes explicitly and is marked raw so that
 * liquidjs does not quote its result a second time.
 */
const hookEngine = strictEngine({ outputEscape: quoteValue });
hookEngine.registerFilter('shell_escape', { handler: quoteValue, raw: true });

/** Parsed hook commands: the same few per Workflow, parsed once for all its runs. */
const parseHook = cachedParser(hookEngine);
/** Whether a command is a template: asked for every hook of every run. */
const templated = createBoundedCache<string, boolean>(256);

/** True when the text of one `{{ … }}` or `{% … %}` tag mentions `issue.` or `issue[`. */
const ISSUE_REFERENCE = /(?<![\w$])issue[.[]/;
const TAGS = /\{\{([\s\S]*?)(?:\}\}|$)|\{%([\s\S]*?)(?:%\}|$)/g;

/**
 * Whether a hook command is a template: only when a `{{` or `{%` tag references `issue.` or
 * `issue[`. Anything else (plain shell, `{{` used for something unrelated) runs verbatim.
 */
export function hookNeedsTemplating(command: string): boolean {
  return memoized(templated, command, () => {
    for (const match of command.matchAll(TAGS)) {
      if (ISSUE_REFERENCE.test(match[1] ?? match[2] ?? '')) return true;
    }
    return false;
  });
}

/**
 * Parse a hook's template without rendering it, for `workflow validate`: a syntax error is
 * `template_parse_error` naming the hook (`hooks.before_run: …`). A command that is not a
 * template (no tag mentions the issue) runs verbatim and has nothing to parse.
 */
export function checkHookTemplate(hookName: HookName, command: string): void {
  if (!hookNeedsTemplating(command)) return;
  try {
    parseHook(command);
  } catch (error) {
    if (!isLorenzError(error)) throw error;
    throw new LorenzError(error.code, `hooks.${hookName}: ${error.message}`, {
      ...error.detail,
      hookName,
    });
  }
}

/**
 * The command bash runs for a hook: verbatim unless it references the issue (and there is
 * one), else rendered with only `issue` in scope. Throws `template_parse_error` /
 * `template_render_error` carrying liquidjs's message.
 */
export function renderHookCommand(
  command: string,
  issue: Issue | null,
  renderLimitMs?: number,
): string {
  if (issue === null || !hookNeedsTemplating(command)) return command;
  const parsed = parseHook(command);
  try {
    const options = renderLimitMs === undefined ? undefined : { renderLimit: renderLimitMs };
    return hookEngine.renderSync(parsed, { issue: issueTemplateView(issue) }, options) as string;
  } catch (error) {
    throw templateError('template_render_error', error, command, renderLimitMs);
  }
}
