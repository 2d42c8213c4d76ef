import type { Issue, IssueInput } from '../../workflow/issue.js';
import { normalizedOrNull } from '../issue-list.js';
import { isJsonMap } from './transport.js';

type JsonMap = Record<string, unknown>;

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function nonEmptyText(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

function field(value: unknown, key: string): unknown {
  return isJsonMap(value) ? value[key] : undefined;
}

function connectionNodes(value: unknown): unknown[] {
  const nodes = field(value, 'nodes');
  return Array.isArray(nodes) ? nodes : [];
}

/** Linear's 0 means "no priority"; 1 (urgent) to 4 (low) are kept; anything else is unknown. */
export function linearPriority(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 4
    ? value
    : null;
}

function blockersOf(node: JsonMap): IssueInput['blocked_by'] {
  return connectionNodes(node.inverseRelations)
    .filter((relation) => field(relation, 'type') === 'blocks')
    .map((relation) => field(relation, 'issue'))
    .filter(isJsonMap)
    .map((blocker) => ({
      id: text(blocker.id),
      identifier: text(blocker.identifier),
      state: text(field(blocker.state, 'name')),
      state_type: text(field(blocker.state, 'type')),
    }));
}

/**
 * One Linear issue node as a normalized issue, or null when it lacks what an issue must have
 * (id, identifier, title, a state name): such an item is dropped, never half-filled.
 * `assigneeId` is the scope's assignee (null: everyone), so an issue fetched by id that was
 * handed to someone else reads `assigned_to_worker: false`.
 */
export function normalizeLinearIssue(node: unknown, assigneeId: string | null): Issue | null {
  if (!isJsonMap(node)) return null;
  const id = nonEmptyText(node.id);
  const identifier = nonEmptyText(node.identifier);
  const title = text(node.title);
  const state = nonEmptyText(field(node.state, 'name'));
  if (id === null || identifier === null || title === null || state === null) return null;
  const assignee = text(field(node.assignee, 'id'));
  const input: IssueInput = {
    id,
    identifier,
    title,
    description: text(node.description),
    priority: linearPriority(node.priority),
    state,
    state_type: text(field(node.state, 'type')),
    branch_name: nonEmptyText(node.branchName),
    url: nonEmptyText(node.url),
    assignee_id: assignee,
    blocked_by: blockersOf(node),
    labels: connectionNodes(node.labels)
      .map((label) => text(field(label, 'name')))
      .filter((name): name is string => name !== null),
    assigned_to_worker: assigneeId === null || assignee === assigneeId,
    created_at: text(node.createdAt),
    updated_at: text(node.updatedAt),
  };
  return normalizedOrNull(input, `linear issue ${identifier}`);
}
