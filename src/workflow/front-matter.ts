import { parse as parseYaml, YAMLParseError } from 'yaml';
import { LorenzError } from './errors.js';

/** The prompt used when a WORKFLOW.md body is blank (the reference's text, word for word). */
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
 * before it) and the next `---` line. Returns null when the file does not open with a fence.
 */
function findFences(lines: string[]): { open: number; close: number } | null {
  const open = lines.findIndex((line) => line.trim() !== '');
  if (open === -1 || !FENCE.test(lines[open] ?? '')) return null;
  const close = lines.findIndex((line, index) => index > open && FENCE.test(line));
  if (close === -1) {
    throw new LorenzError(
      'workflow_parse_error',
      `front matter opened with --- at line ${open + 1} is never closed by a --- line`,
      { line: open + 1 },
    );
  }
  return { open, close };
}

function parseFrontMatterYaml(yaml: string, firstLine: number): unknown {
  try {
    return parseYaml(yaml);
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw error;
    const position = error.linePos?.[0];
    // Report the line of the file, not of the YAML snippet.
    const line = position ? position.line + firstLine - 1 : firstLine;
    const column = position?.col ?? 1;
    const reason = error.message.split(/ at line \d+, column \d+/)[0] ?? error.message;
    throw new LorenzError(
      'workflow_parse_error',
      `invalid YAML front matter at line ${line}, column ${column}: ${reason}`,
      { line, column, yamlCode: error.code },
    );
  }
}

/**
 * Split a WORKFLOW.md into its YAML front matter (a map; empty front matter is {}) and its
 * trimmed body. A file with no front matter is all body.
 */
export function parseWorkflowContent(text: string): WorkflowContent {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const fences = findFences(lines);
  if (fences === null) return { frontMatter: {}, body: lines.join('\n').trim() };
  const yaml = lines.slice(fences.open + 1, fences.close).join('\n');
  const body = lines
    .slice(fences.close + 1)
    .join('\n')
    .trim();
  const value = parseFrontMatterYaml(yaml, fences.open + 2);
  if (value === null || value === undefined) return { frontMatter: {}, body };
  if (typeof value !== 'object' || Array.isArray(value)) {
    const kind = Array.isArray(value) ? 'a list' : `a ${typeof value}`;
    throw new LorenzError(
      'workflow_front_matter_not_a_map',
      `front matter must be a map of settings, not ${kind}`,
    );
  }
  return { frontMatter: value as Record<string, unknown>, body };
}
