import { parseUserYaml } from '../../workflow/yaml.js';

/** The line that opens the comments section (docs/design.md#trackers). */
export const COMMENTS_MARKER = '<!-- lorenz:comments -->';
export const COMMENTS_HEADING = '## Comments';
/**
 * `- <ISO-8601 time> <author>: <text>`: one comment per line. The agent's tools write
 * `agent`; a person replying on the board writes a name, login or email of one word
 * (`- 2026-03-01T10:00:00Z alice@example.com: /approve`), which the inbox matches against
 * `agent.approvals.approvers`.
 */
export const COMMENT_LINE = /^- (\S+) ([^\s:]+): (.*)$/;
/** The author the agent's own comments carry. */
export const AGENT_AUTHOR = 'agent';
const TITLE_LINE = /^#[ \t]+(.*?)[ \t]*$/;
const FENCE = /^---[ \t]*$/;

export interface LocalComment {
  at: string;
  author: string;
  text: string;
}

/** One issue file as written, before it meets the board's states. */
export interface LocalIssueFile {
  id: string;
  /** As written; null when absent or blank. */
  status: string | null;
  labels: string[];
  priority: number | null;
  /** Ids of board issues that block this one. */
  blockedBy: string[];
  createdAt: string | null;
  updatedAt: string | null;
  title: string;
  description: string | null;
  comments: LocalComment[];
}

export type LocalParseResult = { ok: true; file: LocalIssueFile } | { ok: false; reason: string };

/** A file split at its front matter fences; `frontMatter` null when there is none. */
export interface SplitFile {
  frontMatter: string | null;
  body: string;
}

/**
 * The same fence rule as WORKFLOW.md: only blank lines may come before the opening `---`,
 * and a fence that is never closed means the whole file is body.
 */
export function splitFrontMatter(text: string): SplitFile {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const open = lines.findIndex((line) => line.trim() !== '');
  const close =
    open === -1 || !FENCE.test(lines[open] ?? '')
      ? -1
      : lines.findIndex((line, index) => index > open && FENCE.test(line));
  if (close === -1) return { frontMatter: null, body: lines.join('\n') };
  return {
    frontMatter: lines.slice(open + 1, close).join('\n'),
    body: lines.slice(close + 1).join('\n'),
  };
}

type Field<T> = { ok: true; value: T } | { ok: false; reason: string };

const fail = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

function optionalText(map: Record<string, unknown>, key: string): Field<string | null> {
  const value = map[key];
  if (value === undefined || value === null) return { ok: true, value: null };
  if (typeof value !== 'string') return fail(`${key} must be a string`);
  return { ok: true, value: value.trim() === '' ? null : value.trim() };
}

function textList(map: Record<string, unknown>, key: string): Field<string[]> {
  const value = map[key];
  if (value === undefined || value === null) return { ok: true, value: [] };
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    return fail(`${key} must be a list of strings`);
  }
  return {
    ok: true,
    value: value.map((item: string) => item.trim()).filter((item) => item !== ''),
  };
}

/** A timestamp as ISO-8601 UTC, so issues from every tracker sort alike by created_at. */
function timestamp(map: Record<string, unknown>, key: string): Field<string | null> {
  const text = optionalText(map, key);
  if (!text.ok || text.value === null) return text;
  const ms = Date.parse(text.value);
  if (Number.isNaN(ms)) return fail(`${key} must be an ISO-8601 time`);
  return { ok: true, value: new Date(ms).toISOString() };
}

function priorityOf(map: Record<string, unknown>): Field<number | null> {
  const value = map.priority;
  if (value === undefined || value === null) return { ok: true, value: null };
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 4) {
    return fail('priority must be an integer from 1 to 4');
  }
  return { ok: true, value };
}

function frontMatterMap(yaml: string | null): Field<Record<string, unknown>> {
  if (yaml === null) return { ok: true, value: {} };
  const parsed = parseUserYaml(yaml);
  if (!parsed.ok) {
    const { line, reason } = parsed.problem;
    // +1: the opening fence is line 1 of the file.
    return fail(`front matter${line === null ? '' : ` line ${line + 1}`}: ${reason}`);
  }
  if (parsed.empty) return { ok: true, value: {} };
  const value = parsed.value;
  if (
    typeof value !== 'object' ||
    value === null ||
    Object.getPrototypeOf(value) !== Object.prototype
  ) {
    return fail('front matter must be a map');
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** Title, description and comments from the Markdown body. */
function parseBody(id: string, body: string) {
  const lines = body.split('\n');
  const marker = lines.findIndex((line) => line.trim() === COMMENTS_MARKER);
  const main = marker === -1 ? lines : lines.slice(0, marker);
  const first = main.findIndex((line) => line.trim() !== '');
  const heading = first === -1 ? null : TITLE_LINE.exec(main[first] ?? '');
  const title = heading?.[1] ? heading[1] : id;
  const rest = heading ? main.slice(first + 1) : main;
  const description = rest.join('\n').trim();
  const comments: LocalComment[] = [];
  for (const line of marker === -1 ? [] : lines.slice(marker + 1)) {
    const match = COMMENT_LINE.exec(line.trimEnd());
    const [, at, author, text] = match ?? [];
    if (at !== undefined && author !== undefined && text !== undefined) {
      comments.push({ at, author, text });
    }
  }
  return { title, description: description === '' ? null : description, comments };
}

/**
 * Read one issue file. Any value of the wrong type makes the whole file malformed: a board
 * issue is either read completely or dropped (with the reason), never half-filled.
 */
export function parseLocalIssue(id: string, text: string): LocalParseResult {
  const split = splitFrontMatter(text);
  const map = frontMatterMap(split.frontMatter);
  if (!map.ok) return map;
  const fm = map.value;
  const status = optionalText(fm, 'status');
  if (!status.ok) return status;
  const labels = textList(fm, 'labels');
  if (!labels.ok) return labels;
  const priority = priorityOf(fm);
  if (!priority.ok) return priority;
  const blockedBy = textList(fm, 'blocked_by');
  if (!blockedBy.ok) return blockedBy;
  const createdAt = timestamp(fm, 'created_at');
  if (!createdAt.ok) return createdAt;
  const updatedAt = timestamp(fm, 'updated_at');
  if (!updatedAt.ok) return updatedAt;
  return {
    ok: true,
    file: {
      id,
      status: status.value,
      labels: labels.value,
      priority: priority.value,
      blockedBy: blockedBy.value,
      createdAt: createdAt.value,
      updatedAt: updatedAt.value,
      ...parseBody(id, split.body),
    },
  };
}
