import { type ConfigProblem, invalidAll, isMap } from './config-sections.js';

/**
 * `comments:` of an issue in `tracker.issues` (the memory board): what people said on the
 * issue, so a demo or a test can answer the agent's inbox (`/approve`, `/steer …`) with
 * `kubectl apply` alone. The memory adapter fills in what is left out (src/tracker/memory.ts):
 * a stable id, and the time the board was read as created_at.
 */
export interface BoardComment {
  author: string;
  body: string;
  author_id: string | null;
  author_email: string | null;
  /** RFC 3339, as written; null: when the adapter read the board. */
  created_at: string | null;
  /** As written; null: a hash of the issue, the comment's place, its author and its body. */
  id: string | null;
}

/** The keys a comment may have; any other is an error, so a typo never drops a reply. */
const KEYS = new Set(['author', 'body', 'author_id', 'author_email', 'created_at', 'id']);
const MAX_COMMENTS = 256;
const MAX_BODY = 65_536;
const MAX_FIELD = 256;
// RFC 3339 with a zone, as trackers write it (`2026-03-01T10:00:00Z`, `…+02:00`).
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** A string, or a number written without quotes (an id or a user id `1234`). */
function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

function field(
  raw: Record<string, unknown>,
  key: string,
  path: string,
  problems: ConfigProblem[],
  rule: { required?: boolean; max?: number; pattern?: RegExp; patternRule?: string },
): string | null {
  const value = raw[key];
  if (value === undefined || value === null) {
    if (rule.required === true) problems.push({ path: `${path}.${key}`, rule: 'is required' });
    return null;
  }
  const text = textOf(value);
  const max = rule.max ?? MAX_FIELD;
  if (text === null || (rule.required === true && text.trim() === '')) {
    problems.push({ path: `${path}.${key}`, rule: 'must be a non-empty string' });
  } else if (text.length > max) {
    problems.push({ path: `${path}.${key}`, rule: `must be at most ${max} characters` });
  } else if (rule.pattern !== undefined && !rule.pattern.test(text)) {
    problems.push({ path: `${path}.${key}`, rule: rule.patternRule ?? 'is not valid' });
  } else {
    return text;
  }
  return null;
}

function parseComment(raw: unknown, path: string, problems: ConfigProblem[]): BoardComment | null {
  if (!isMap(raw)) {
    problems.push({ path, rule: 'must be a map with author and body' });
    return null;
  }
  for (const key of Object.keys(raw)) {
    if (!KEYS.has(key)) {
      problems.push({
        path: `${path}.${key}`,
        rule: `is not a comment key (author, body, author_id, author_email, created_at, id)`,
      });
    }
  }
  const before = problems.length;
  const comment: BoardComment = {
    author: field(raw, 'author', path, problems, { required: true }) ?? '',
    body: field(raw, 'body', path, problems, { required: true, max: MAX_BODY }) ?? '',
    author_id: field(raw, 'author_id', path, problems, {}),
    author_email: field(raw, 'author_email', path, problems, {}),
    created_at: field(raw, 'created_at', path, problems, {
      pattern: RFC3339,
      patternRule: 'must be an RFC 3339 time with a zone, e.g. 2026-03-01T10:00:00Z',
    }),
    id: field(raw, 'id', path, problems, { required: false }),
  };
  return problems.length === before ? comment : null;
}

/** The comments of one `tracker.issues` entry (`where`: `tracker.issues[0]`); [] when none. */
function commentsOf(entry: unknown, where: string, problems: ConfigProblem[]): BoardComment[] {
  if (!isMap(entry) || entry.comments === undefined || entry.comments === null) return [];
  const path = `${where}.comments`;
  if (!Array.isArray(entry.comments)) {
    problems.push({ path, rule: 'must be a list of comments' });
    return [];
  }
  if (entry.comments.length > MAX_COMMENTS) {
    problems.push({ path, rule: `must hold at most ${MAX_COMMENTS} comments` });
    return [];
  }
  return entry.comments.flatMap((raw: unknown, index) => {
    const comment = parseComment(raw, `${path}[${index}]`, problems);
    return comment === null ? [] : [comment];
  });
}

/**
 * The comments of every entry of `tracker.issues`, in the entries' order (one list per
 * entry). Every problem is reported at once: `tracker.issues[0].comments[1].body: is required`.
 */
export function parseBoardComments(entries: readonly unknown[]): BoardComment[][] {
  const problems: ConfigProblem[] = [];
  const lists = entries.map((entry, index) =>
    commentsOf(entry, `tracker.issues[${index}]`, problems),
  );
  if (problems.length > 0) throw invalidAll(problems);
  return lists;
}
