import { Liquid, type LiquidOptions, type Template } from 'liquidjs';
import { createBoundedCache, memoized } from '../workflow/bounded-cache.js';
import { templateError } from './liquid-errors.js';
import { TEMPLATE_LIMITS } from './limits.js';
import { DEFERRED_LOCALE, deferLocale } from './locale.js';

/**
 * A strict liquidjs engine, as the prompt and the hooks render with: an unknown variable or
 * filter is an error, only own properties are read, no partials, and the template limits.
 * `extra` adds what one engine does differently (the hooks' shell quoting).
 */
export function strictEngine(extra: LiquidOptions = {}): Liquid {
  return deferLocale(
    new Liquid({
      strictVariables: true,
      strictFilters: true,
      globals: {},
      ownPropertyOnly: true,
      templates: {},
      ...extra,
      ...TEMPLATE_LIMITS,
      ...DEFERRED_LOCALE,
    }),
  );
}

/**
 * The parse of a template text by `engine`, cached by the text (the few texts of each
 * Workflow, bounded): re-rendering across polls and runs reuses it. A syntax error throws
 * `template_parse_error` (not cached, so it is said again).
 */
export function cachedParser(engine: Liquid): (text: string) => Template[] {
  const parsed = createBoundedCache<string, Template[]>(256);
  return (text) =>
    memoized(parsed, text, () => {
      try {
        return engine.parse(text);
      } catch (error) {
        throw templateError('template_parse_error', error, text);
      }
    });
}
