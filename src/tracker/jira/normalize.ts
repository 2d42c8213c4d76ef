import type { Issue, IssueInput } from '../../workflow/issue.js';
import { normalizedOrNull } from '../issue-list.js';
import { isJsonMap } from './transport.js';

/** The issue fields the adapter asks Jira for: only what src/workflow/issue.ts needs. */
export const JIRA_FIELDS = [
  'summary',
  'description',
  'status',
  'priority',
  'labels',
  'issuelinks',
  'assignee',
  'created',
  'updated',
];

function field(value: unknown, key: string): unknown {
  return isJsonMap(value) ? value[key] : undefined;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function nonEmptyText(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/**
 * Jira's priority names as the 1 (most urgent) to 4 scale the dispatch order uses. Both the
 * current default scheme (Highest … Lowest) and the classic one (Blocker … Trivial) are
 * known. The lowest level of each has no number, so it sorts with "no priority", after Low /
 * Minor; any other (custom) name is no priority too.
 */
const PRIORITY_BY_NAME: Readonly<Record<string, number | null>> = {
  highest: 1,
  high: 2,
  medium: 3,
  low: 4,
  lowest: null,
  blocker: 1,
  critical: 2,
  major: 3,
  minor: 4,
  trivial: null,
};

export function jiraPriority(priority: unknown): number | null {
  const name = text(field(priority, 'name'))?.trim().toLowerCase() ?? '';
  return PRIORITY_BY_NAME[name] ?? null;
}

/** Jira's status categories as the state types Linear uses (and the dispatch policy reads). */
const STATE_TYPE_BY_CATEGORY: Readonly<Record<string, string>> = {
  new: 'unstarted',
  indeterminate: 'started',
  done: 'completed',
};

export function jiraStateType(status: unknown): string | null {
  const key = text(field(field(status, 'statusCategory'), 'key')) ?? '';
  return STATE_TYPE_BY_CATEGORY[key] ?? null;
}

/** Jira writes `2026-01-02T03:04:05.000+0000`; ISO-8601 UTC sorts alike across trackers. */
function isoTime(value: unknown): string | null {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

// Atlassian Document Format, reduced to text: nodes that hold inline content become lines,
// everything else (lists, quotes, panels, tables) is walked for them. Marks are dropped.
const INLINE = new Set(['text', 'hardBreak', 'mention', 'emoji', 'inlineCard', 'date', 'status']);
// Nesting this deep is not a description anyone wrote; it stops the walk, not the poll.
const MAX_ADF_DEPTH = 32;

function inlineText(node: unknown): string {
  switch (field(node, 'type')) {
    case 'text':
      return text(field(node, 'text')) ?? '';
    case 'hardBreak':
      return '\n';
    case 'inlineCard':
      return text(field(field(node, 'attrs'), 'url')) ?? '';
    default:
      return text(field(field(node, 'attrs'), 'text')) ?? '';
  }
}

function blockText(node: unknown, depth: number): string {
  const children = field(node, 'content');
  if (!Array.isArray(children) || depth > MAX_ADF_DEPTH) return '';
  if (children.every((child) => INLINE.has(String(field(child, 'type'))))) {
    return children.map(inlineText).join('');
  }
  const parts = children
    .map((child) =>
      INLINE.has(String(field(child, 'type'))) ? inlineText(child) : blockText(child, depth + 1),
    )
    .filter((part) => part.trim() !== '');
  const joined = parts.join(field(node, 'type') === 'doc' ? '\n\n' : '\n');
  return field(node, 'type') === 'listItem' ? `- ${joined}` : joined;
}

/** A description as plain text: ADF (API v3) walked, a string (API v2, a proxy) kept. */
export function adfToText(description: unknown): string | null {
  const plain = typeof description === 'string' ? description : blockText(description, 0);
  return plain.trim() === '' ? null : plain.trim();
}

/**
 * "Blocks" links where the other issue is the inward one: this issue "is blocked by" it.
 * The type is matched by name or by its inward wording, since a site may rename either.
 */
function blockersOf(links: unknown): IssueInput['blocked_by'] {
  if (!Array.isArray(links)) return [];
  return links
    .filter((link) => {
      const type = field(link, 'type');
      const name = text(field(type, 'name'))?.trim().toLowerCase();
      const inward = text(field(type, 'inward'))?.trim().toLowerCase();
      return name === 'blocks' || inward === 'is blocked by';
    })
    .map((link) => field(link, 'inwardIssue'))
    .filter(isJsonMap)
    .map((blocker) => {
      const status = field(blocker.fields, 'status');
      return {
        id: text(blocker.id),
        identifier: text(blocker.key),
        state: text(field(status, 'name')),
        state_type: jiraStateType(status),
      };
    });
}

/**
 * One Jira issue (IssueBean) as a normalized issue, or null when it lacks what an issue must
 * have (id, key, summary, a status name): such an item is dropped, never half-filled.
 */
export function normalizeJiraIssue(bean: unknown, site: string): Issue | null {
  if (!isJsonMap(bean) || !isJsonMap(bean.fields)) return null;
  const fields = bean.fields;
  const id = nonEmptyText(bean.id);
  const key = nonEmptyText(bean.key);
  const title = text(fields.summary);
  const state = nonEmptyText(field(fields.status, 'name'));
  if (id === null || key === null || title === null || state === null) return null;
  const labels = Array.isArray(fields.labels) ? fields.labels : [];
  const input: IssueInput = {
    id,
    identifier: key,
    title,
    description: adfToText(fields.description),
    priority: jiraPriority(fields.priority),
    state,
    state_type: jiraStateType(fields.status),
    branch_name: null,
    url: `${site}/browse/${encodeURIComponent(key)}`,
    assignee_id: text(field(fields.assignee, 'accountId')),
    blocked_by: blockersOf(fields.issuelinks),
    labels: labels.filter((label): label is string => typeof label === 'string'),
    created_at: isoTime(fields.created),
    updated_at: isoTime(fields.updated),
  };
  return normalizedOrNull(input, `jira issue ${key}`);
}
