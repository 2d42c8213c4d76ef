import type { ApprovalPattern } from './approvals-config.js';
import { PATTERN_RULE } from './approvals-schema.js';

/**
 * The patterns of `agent.approvals.rules` (docs/approvals.md#patterns), compiled once at
 * load. A glob is matched by a small automaton over its tokens, never turned into a regex,
 * so no glob and no text can make a test take more than (pattern × text) steps: the agent
 * writes the text, and a stalled policy would stall its run.
 */

/** Longest pattern accepted: longer is refused at load. */
export const MAX_PATTERN_LENGTH = 1024;
/**
 * How much of a text a pattern sees (its first characters). Above what the runner sends
 * (a command is cut at 4096), so a real request is tested whole; this bounds the rest.
 */
export const MAX_TESTED_TEXT = 16_384;

/** `command` and `title` globs: `*` crosses everything; `path` globs: `*` stops at `/`. */
export type PatternField = 'command' | 'title' | 'path';

/** Flags a regex pattern may carry; g, y and d make `test` stateful or mean nothing here. */
const REGEX_FLAGS = new Set(['i', 'm', 's', 'u', 'v']);
/** A pattern in slashes, with only JavaScript's flag letters after the closing one: a regex. */
const REGEX_FORM = /^\/([\s\S]*)\/([dgimsuvy]*)$/;
/** One piece of a regex's source that is not a paren: a character class, an escape, a char. */
const PIECE = String.raw`(?:\[(?:[^\]\\]|\\.)*\]|\\.|[^()\\[])`;
/** A repeated group whose body repeats too (`(a+)+`): the shape that can take exponential time. */
const NESTED_QUANTIFIER = new RegExp(
  String.raw`\(${PIECE}*(?:[+*]|\{\d+,\d*\})${PIECE}*\)(?:[+*]|\{\d+,\d*\})`,
);

export class PatternError extends Error {}

interface ClassRange {
  from: string;
  to: string;
}

type Token =
  | { type: 'char'; char: string }
  | { type: 'one' }
  | { type: 'class'; ranges: ClassRange[]; negated: boolean }
  /** `*`: any run of characters (of a path glob: not `/`); `**`: any run at all. */
  | { type: 'star'; crossesSlash: boolean }
  /** A `**` segment of a path glob (before a `/`): zero or more whole directories. */
  | { type: 'dirs' };

function parseClass(chars: string[], start: number): { token: Token; next: number } {
  let index = start + 1;
  const negated = chars[index] === '!' || chars[index] === '^';
  if (negated) index += 1;
  const ranges: ClassRange[] = [];
  let first = true;
  while (index < chars.length && (chars[index] !== ']' || first)) {
    first = false;
    let from = chars[index] ?? '';
    if (from === '\\') {
      index += 1;
      from = chars[index] ?? '';
      if (from === '') break;
    }
    index += 1;
    let to = from;
    if (chars[index] === '-' && index + 1 < chars.length && chars[index + 1] !== ']') {
      to = chars[index + 1] === '\\' ? (chars[index + 2] ?? '') : (chars[index + 1] ?? '');
      index += chars[index + 1] === '\\' ? 3 : 2;
      if (to === '') break;
      if ((to.codePointAt(0) ?? 0) < (from.codePointAt(0) ?? 0)) {
        throw new PatternError(`invalid glob: the range ${from}-${to} is backwards`);
      }
    }
    ranges.push({ from, to });
  }
  if (chars[index] !== ']') {
    throw new PatternError(`invalid glob: "[" at ${start + 1} is not closed (write \\[ for a [)`);
  }
  return { token: { type: 'class', ranges, negated }, next: index + 1 };
}

function parseGlob(source: string, field: PatternField): Token[] {
  const chars = Array.from(source);
  const tokens: Token[] = [];
  const path = field === 'path';
  let index = 0;
  while (index < chars.length) {
    const char = chars[index] ?? '';
    if (char === '\\') {
      const escaped = chars[index + 1];
      if (escaped === undefined) throw new PatternError('invalid glob: it ends with a lone \\');
      tokens.push({ type: 'char', char: escaped });
      index += 2;
    } else if (char === '[') {
      const { token, next } = parseClass(chars, index);
      tokens.push(token);
      index = next;
    } else if (char === '?') {
      tokens.push({ type: 'one' });
      index += 1;
    } else if (char === '*') {
      let end = index;
      while (chars[end] === '*') end += 1;
      const double = end - index >= 2;
      const atSegmentStart = index === 0 || chars[index - 1] === '/';
      if (path && double && atSegmentStart && chars[end] === '/') {
        tokens.push({ type: 'dirs' });
        end += 1;
      } else {
        tokens.push({ type: 'star', crossesSlash: !path || double });
      }
      index = end;
    } else {
      tokens.push({ type: 'char', char });
      index += 1;
    }
  }
  return tokens;
}

function inClass(token: Extract<Token, { type: 'class' }>, char: string): boolean {
  const code = char.codePointAt(0) ?? -1;
  const hit = token.ranges.some(
    (range) => code >= (range.from.codePointAt(0) ?? 0) && code <= (range.to.codePointAt(0) ?? 0),
  );
  return hit !== token.negated;
}

/**
 * Whether the automaton of `tokens` accepts `text`. States: 2·i is "before token i", 2·i+1
 * is "inside the `**` segment token i, after at least one character" (only `/` leaves it).
 */
function globAccepts(tokens: readonly Token[], text: readonly string[], path: boolean): boolean {
  const size = 2 * tokens.length + 2;
  const accept = 2 * tokens.length;
  let current = new Uint8Array(size);
  const close = (states: Uint8Array) => {
    // Epsilon moves go forward only (a star or a `**` segment may match nothing), so one pass suffices.
    for (let i = 0; i < tokens.length; i += 1) {
      const type = tokens[i]?.type;
      if (states[2 * i] && (type === 'star' || type === 'dirs')) states[2 * i + 2] = 1;
    }
  };
  current[0] = 1;
  close(current);
  for (const char of text) {
    const next = new Uint8Array(size);
    let alive = false;
    for (let i = 0; i < tokens.length; i += 1) {
      const token = tokens[i];
      if (!token) continue;
      const before = current[2 * i] === 1;
      const inside = current[2 * i + 1] === 1;
      if (!before && !inside) continue;
      let stay = false;
      let advance = false;
      let enter = false;
      if (token.type === 'char') advance = before && token.char === char;
      else if (token.type === 'one') advance = before && !(path && char === '/');
      else if (token.type === 'class')
        advance = before && !(path && char === '/') && inClass(token, char);
      else if (token.type === 'star') stay = before && (token.crossesSlash || char !== '/');
      else {
        advance = char === '/';
        enter = true;
      }
      if (stay) next[2 * i] = 1;
      if (enter) next[2 * i + 1] = 1;
      if (advance) next[2 * i + 2] = 1;
      alive ||= stay || enter || advance;
    }
    if (!alive) return false;
    close(next);
    current = next;
  }
  return current[accept] === 1;
}

/**
 * A path as the rules see it: `.` and empty segments dropped, `..` resolved (never above
 * the start), no trailing `/`, so `src/./../.env` cannot slip past a rule on `.env` files.
 */
export function normalizePath(path: string): string {
  const absolute = path.startsWith('/');
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length > 0 && segments.at(-1) !== '..') segments.pop();
      else if (!absolute) segments.push('..');
    } else segments.push(segment);
  }
  const joined = segments.join('/');
  return absolute ? `/${joined}` : joined || '.';
}

function compileRegex(body: string, flags: string): (text: string) => boolean {
  const written = `/${body}/${flags}`;
  if (body === '') throw new PatternError(`invalid regex ${written}: it is empty`);
  for (const flag of flags) {
    if (!REGEX_FLAGS.has(flag)) {
      throw new PatternError(
        `invalid regex ${written}: flag ${flag} is not supported (use i, m, s, u or v)`,
      );
    }
  }
  if (NESTED_QUANTIFIER.test(body)) {
    throw new PatternError(
      `invalid regex ${written}: a repeated group holds a repetition, which can take exponential time`,
    );
  }
  let regex: RegExp;
  try {
    regex = new RegExp(body, flags);
  } catch (error) {
    // V8 says `Invalid regular expression: /<source>/<flags>: <why>`: keep only the why.
    const message = error instanceof Error ? error.message : String(error);
    const why = message.replace(/^Invalid regular expression: /, '').replace(`${written}: `, '');
    throw new PatternError(`invalid regex ${written}: ${why}`);
  }
  return (text) => regex.test(text);
}

/**
 * Compile one pattern of `field`; throws PatternError with the rule's text. A path glob
 * that does not start with `/` matches at any depth (docs/approvals.md#patterns).
 */
export function compilePattern(source: string, field: PatternField): ApprovalPattern {
  if (source.trim() === '') throw new PatternError(PATTERN_RULE);
  if (source.length > MAX_PATTERN_LENGTH) {
    throw new PatternError(`must be at most ${MAX_PATTERN_LENGTH} characters`);
  }
  const path = field === 'path';
  const prepare = (text: string): string => {
    const bounded = text.slice(0, MAX_TESTED_TEXT);
    return path ? normalizePath(bounded) : bounded;
  };
  const regexForm = REGEX_FORM.exec(source);
  if (regexForm && source.length > 1) {
    const matches = compileRegex(regexForm[1] ?? '', regexForm[2] ?? '');
    return { source, test: (text) => matches(prepare(text)) };
  }
  let tokens: Token[];
  try {
    tokens = parseGlob(source, field);
  } catch (error) {
    if (error instanceof PatternError) throw new PatternError(`${error.message}: ${source}`);
    throw error;
  }
  // Bridges report absolute paths, so a relative path glob is matched at any depth: as if
  // it began with `**/` (`.env` is every `.env`, `src/*.ts` every `src` folder's files).
  if (path && !source.startsWith('/') && tokens[0]?.type !== 'dirs') {
    tokens = [{ type: 'dirs' }, ...tokens];
  }
  return {
    source,
    test: (text) => globAccepts(tokens, Array.from(prepare(text)), path),
  };
}
