import type { Blocker, Issue } from '../workflow/issue.js';

/**
 * What templates see as `issue`: exactly Lorenz's snake_case keys
 * (docs/design.md#kept-to-the-letter), every one present (null when unknown) so strict mode only
 * fails on names that do not exist, and `assigned_to_worker` always a boolean (missing means
 * assigned).
 */
export type IssueTemplateView = Issue;

function blockerView(blocker: Partial<Blocker> | null | undefined): Blocker {
  return {
    id: blocker?.id ?? null,
    identifier: blocker?.identifier ?? null,
    state: blocker?.state ?? null,
    state_type: blocker?.state_type ?? null,
  };
}

export function issueTemplateView(issue: Issue): IssueTemplateView {
  return {
    id: issue.id ?? null,
    identifier: issue.identifier,
    title: issue.title,
    description: issue.description ?? null,
    priority: issue.priority ?? null,
    state: issue.state ?? null,
    state_type: issue.state_type ?? null,
    branch_name: issue.branch_name ?? null,
    url: issue.url ?? null,
    assignee_id: issue.assignee_id ?? null,
    blocked_by: (issue.blocked_by ?? []).map(blockerView),
    labels: [...(issue.labels ?? [])],
    assigned_to_worker: issue.assigned_to_worker !== false,
    created_at: issue.created_at ?? null,
    updated_at: issue.updated_at ?? null,
  };
}
