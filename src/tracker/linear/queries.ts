import type { AssigneeScope, ProjectScope } from './settings.js';

/** Issues per page: Linear's own default page size, and its cap keeps a query's cost low. */
export const LINEAR_PAGE_SIZE = 50;

/**
 * Labels and relations are read as one page each, not paginated: an issue with more than
 * this many is unheard of, and Linear prices a query by its connections' sizes (page size ×
 * nested sizes), so 25 keeps a 50-issue page well inside the 10 000-point query limit.
 */
export const LINEAR_NESTED_PAGE_SIZE = 25;

// Only the fields src/workflow/issue.ts needs. Blockers are the issue's inverse relations:
// a relation of type "blocks" whose `issue` blocks this one (its `relatedIssue`).
export const ISSUE_FIELDS = `
fragment LorenzIssue on Issue {
  id
  identifier
  title
  description
  priority
  branchName
  url
  createdAt
  updatedAt
  state { name type }
  assignee { id }
  labels(first: ${LINEAR_NESTED_PAGE_SIZE}) { nodes { name } }
  inverseRelations(first: ${LINEAR_NESTED_PAGE_SIZE}) {
    nodes { type issue { id identifier state { name type } } }
  }
}`;

export const ISSUES_QUERY = `
query LorenzIssues($filter: IssueFilter!, $first: Int!, $after: String) {
  issues(filter: $filter, first: $first, after: $after) {
    nodes { ...LorenzIssue }
    pageInfo { hasNextPage endCursor }
  }
}
${ISSUE_FIELDS}`;

/** The API key's own user, for `assignee: me`. */
export const VIEWER_QUERY = `
query LorenzViewer {
  viewer { id }
}`;

type Filter = Record<string, unknown>;

/** The projects in scope, as a filter on an issue's project. */
export function projectFilter(project: ProjectScope): Filter {
  if (project.kind === 'labels') {
    return { labels: { some: { name: { in: project.labels } } } };
  }
  return { slugId: { in: project.slugs } };
}

/**
 * Linear compares state names exactly with `in`, so each name is matched with
 * `eqIgnoreCase`; the adapter checks again after trimming the answer's names.
 */
export function stateFilter(states: readonly string[]): Filter {
  return { or: states.map((name) => ({ name: { eqIgnoreCase: name } })) };
}

/** The tracker's scope: its projects and, unless everyone's issues count, one assignee. */
export function scopeFilter(project: ProjectScope, assigneeId: string | null): Filter {
  return {
    project: projectFilter(project),
    ...(assigneeId === null ? {} : { assignee: { id: { eq: assigneeId } } }),
  };
}

export function idsFilter(ids: readonly string[]): Filter {
  return { id: { in: [...ids] } };
}

/** The assignee id a scope filters on, once `me` is resolved (null: everyone). */
export function assigneeIdOf(scope: AssigneeScope, viewerId: string | null): string | null {
  if (scope.kind === 'everyone') return null;
  if (scope.kind === 'id') return scope.id;
  return viewerId;
}
