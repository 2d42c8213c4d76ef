import { LorenzError } from './errors.js';
import { parseUserYaml } from './yaml.js';

/**
 * The prompt used when a WORKFLOW.md body is blank: Lorenz's text word for word
 * (docs/design.md#templates), its final newline included.
 */
export const DEFAULT_PROMPT_TEMPLATE = [
  'You are working on an issue from the configured tracker.',
  '',
  'Identifier: {{ issue.identifier }}',
  'Title: {{ issue.title }}',
  '',
  'Body:',
  '{% if issue.description %}',
  '{{ issue.description }}',
  '{% else %}',
  'No description provided.',
  '{% endif %}',
  '',
].join('\n');

/** A blank body never means a blank prompt. */
export function effectivePromptTemplate(body: string): string {
  const trimmed = body.trim();
  return trimmed === '' ? DEFAULT_PROMPT_TEMPLATE : trimmed;
}

export interface WorkflowContent {
  frontMatter: Record<string, unknown>;
  body: string;
}

const FENCE = /^---[ \t]*$/;

/**
 * Where the front matter sits: the first line that is a `---` fence (only blank lines may come
 * before it) and the next `---` line. Returns null when the file does not open with a fence,
 * or when the fence is never closed: a file that opens with a Markdown rule and has no second
 * one is all body, as Lorenz reads it.
 */
function findFences(lines: string[]): { open: number; close: number } | null {
  const open = lines.findIndex((line) => line.trim() !== '');
  if (open === -1 || !FENCE.test(lines[open] ?? '')) return null;
  const close = lines.findIndex((line, index) => index > open && FENCE.test(line));
  return close === -1 ? null : { open, close };
}

/** What the front matter is when it is not a map, for the message. */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Map) return 'an ordered map (!!omap)';
  if (value instanceof Set) return 'a set (!!set)';
  if (value instanceof Uint8Array) return 'binary data (!!binary)';
  if (value instanceof Date) return 'a timestamp';
  return typeof value === 'object' ? 'a tagged value' : `a ${typeof value}`;
}

/** A plain map of settings: not null, not a list, not a tagged collection or scalar. */
const isPlainMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

function parseFrontMatterYaml(yaml: string, firstLine: number): { empty: boolean; value: unknown } {
  const result = parseUserYaml(yaml);
  if (result.ok) return result;
  const { problem } = result;
  // Report the line of the file, not of the YAML snippet.
  const line = problem.line === null ? null : problem.line + firstLine - 1;
  const where = line === null ? '' : ` at line ${line}, column ${problem.column ?? 1}`;
  throw new LorenzError(
    'workflow_parse_error',
    `invalid YAML front matter${where}: ${problem.reason}`,
    { line, column: problem.column, yamlCode: problem.yamlCode },
  );
}

/** Where a WORKFLOW.md's parts are, for messages that name a line of the file. */
export interface WorkflowLayout {
  /** The YAML between the fences. */
  yaml: string;
  /** The 1-based line of the file the YAML's first line is on. */
  yamlLine: number;
  /** The 1-based line of the file after the closing fence, where the body begins. */
  bodyLine: number;
}

// U+2028 and U+2029 break lines too (a fence followed by one still ends there).
const splitLines = (text: string) => text.replace(/^\uFEFF/, '').split(/\r?\n|\u2028|\u2029/);

/** The front matter's place in a WORKFLOW.md; null when it has none (it is all body). */
export function workflowLayout(text: string): WorkflowLayout | null {
  const lines = splitLines(text);
  const fences = findFences(lines);
  if (fences === null) return null;
  return {
    yaml: lines.slice(fences.open + 1, fences.close).join('\n'),
    yamlLine: fences.open + 2,
    bodyLine: fences.close + 2,
  };
}

/**
 * Split a WORKFLOW.md into its YAML front matter (a map; empty front matter is {}) and its
 * trimmed body. A file with no front matter is all body.
 */
export function parseWorkflowContent(text: string): WorkflowContent {
  const lines = splitLines(text);
  const fences = findFences(lines);
  if (fences === null) return { frontMatter: {}, body: lines.join('\n').trim() };
  const yaml = lines.slice(fences.open + 1, fences.close).join('\n');
  const body = lines
    .slice(fences.close + 1)
    .join('\n')
    .trim();
  const { empty, value } = parseFrontMatterYaml(yaml, fences.open + 2);
  // Nothing (or only comments) between the fences: no settings. An explicit null (`~`) is
  // a value, and not a map.
  if (empty) return { frontMatter: {}, body };
  if (!isPlainMap(value)) {
    throw new LorenzError(
      'workflow_front_matter_not_a_map',
      `front matter must be a map of settings, not ${kindOf(value)}`,
    );
  }
  return { frontMatter: value, body };
}
