// The Linear stand-in's side of the agent tools: the root fields the writer reads (issue,
// comment, team, projects) and the mutations it sends (commentCreate, commentUpdate,
// issueUpdate, issueCreate). graphql-js validates each operation and its variables against
// Linear's schema before any of these run; they apply the change to FakeData, so a later
// query sees it. A missing entity answers as Linear does: an error, data null.
import { randomUUID } from 'node:crypto';
import {
  type FakeComment,
  type FakeData,
  type FakeIssue,
  type FakeTeam,
  UnsupportedFilter,
  userById,
} from './linear-data.js';

type Resolved = Record<string, unknown>;
export type IssueObject = (data: FakeData, issue: FakeIssue) => Resolved;

interface PageArgs {
  first?: number | null;
  after?: string | null;
}

/** Linear's answer when an id names nothing: a GraphQL error, and the field's data null. */
export class EntityNotFound extends Error {
  constructor(kind: string) {
    super(`Entity not found: ${kind}`);
  }
}

/** A cursor connection over `items` by id, as Linear pages nested connections. */
export function pagedConnection<T extends { id: string }>(
  items: readonly T[],
  args: PageArgs,
  toNode: (item: T) => unknown,
) {
  const after = args.after ?? null;
  const start = after === null ? 0 : items.findIndex((item) => item.id === after) + 1;
  if (after !== null && start === 0) throw new Error(`unknown cursor ${after}`);
  const page = items.slice(start, start + (args.first ?? 50));
  const last = page.at(-1);
  return {
    nodes: page.map(toNode),
    pageInfo: {
      hasNextPage: start + page.length < items.length,
      hasPreviousPage: start > 0,
      startCursor: page[0]?.id ?? null,
      endCursor: last?.id ?? null,
    },
  };
}

function find<T extends { id: string }>(items: readonly T[], id: unknown, kind: string): T {
  const found = items.find((item) => item.id === id);
  if (found === undefined) throw new EntityNotFound(kind);
  return found;
}

/** An issue by its id or, as Linear also takes, its identifier. */
function issueByRef(data: FakeData, ref: unknown): FakeIssue {
  const found = data.issues.find((issue) => issue.id === ref || issue.identifier === ref);
  if (found === undefined) throw new EntityNotFound('Issue');
  return found;
}

export function commentObject(data: FakeData, comment: FakeComment): Resolved {
  // The comment's own fields as they are; its two ids become the objects they name.
  const { userId, issueId, ...fields } = comment;
  return { ...fields, user: userById(data, userId), issue: { id: issueId } };
}

export function teamObject(data: FakeData, team: FakeTeam): Resolved {
  const states = team.stateIds.map((id) => find(data.states, id, 'WorkflowState'));
  return {
    id: team.id,
    key: team.key,
    name: team.name,
    states: (args: PageArgs) => pagedConnection(states, args, (state) => ({ ...state })),
  };
}

/** The comments of an issue, oldest first (Linear's default order, createdAt). */
export const commentsOf = (data: FakeData, issueId: string) =>
  data.comments.filter((comment) => comment.issueId === issueId);

export interface CommentBy {
  /** The user's name; a user of that name is added to the workspace when there is none. */
  author: string;
  body: string;
  email?: string;
  userId?: string;
  createdAt?: string;
}

/**
 * A comment by a named person on an issue (by id or identifier), as a test adds one: the
 * writer then reads it through Linear's own wire format (user { id name email }).
 */
export function addLinearComment(data: FakeData, issueRef: string, by: CommentBy): FakeComment {
  const issue = issueByRef(data, issueRef);
  let user = data.users.find((candidate) =>
    by.userId === undefined ? candidate.name === by.author : candidate.id === by.userId,
  );
  if (user === undefined) {
    const slug = by.author.toLowerCase().replace(/[^a-z0-9]+/g, '-');
    user = {
      id: by.userId ?? `user-${slug}`,
      name: by.author,
      email: by.email ?? `${slug}@example.com`,
    };
    data.users.push(user);
  }
  const at = by.createdAt ?? new Date().toISOString();
  const comment: FakeComment = {
    id: randomUUID(),
    issueId: issue.id,
    body: by.body,
    userId: user.id,
    createdAt: at,
    updatedAt: at,
  };
  data.comments.push(comment);
  return comment;
}

function projectsWhere(data: FakeData, filter: unknown) {
  const map = (filter ?? {}) as Record<string, unknown>;
  return data.projects.filter((project) =>
    Object.entries(map).every(([key, operand]) => {
      const comparator = operand as { in?: string[] } & { some?: { name?: { in?: string[] } } };
      if (key === 'slugId') return comparator.in?.includes(project.slugId) ?? false;
      if (key === 'labels') {
        const names = comparator.some?.name?.in ?? [];
        return project.labels.some((label) => names.includes(label));
      }
      throw new UnsupportedFilter(`projects filter.${key}: the stand-in does not evaluate it`);
    }),
  );
}

/**
 * The root fields and mutations, answering from and writing to `data()` (a function: tests
 * replace the stand-in's data between cases). `now` stamps new and changed records.
 */
export function writeResolvers(
  data: () => FakeData,
  issueObject: IssueObject,
  now: () => string = () => new Date().toISOString(),
) {
  const payload = (extra: Resolved) => ({ success: true, lastSyncId: 1, ...extra });
  return {
    issue: (args: { id: string }) => issueObject(data(), issueByRef(data(), args.id)),
    comment: (args: { id?: string | null }) =>
      commentObject(data(), find(data().comments, args.id, 'Comment')),
    team: (args: { id: string }) => teamObject(data(), find(data().teams, args.id, 'Team')),
    projects: (args: PageArgs & { filter?: unknown }) =>
      pagedConnection(projectsWhere(data(), args.filter), args, (project) => ({
        id: project.id,
        teams: (teamArgs: PageArgs) =>
          pagedConnection(
            project.teamIds.map((id) => find(data().teams, id, 'Team')),
            teamArgs,
            (team) => teamObject(data(), team),
          ),
      })),

    commentCreate(args: { input: { issueId?: string | null; body?: string | null } }) {
      const issue = issueByRef(data(), args.input.issueId);
      const at = now();
      const comment: FakeComment = {
        id: randomUUID(),
        issueId: issue.id,
        body: args.input.body ?? '',
        userId: data().viewerId,
        createdAt: at,
        updatedAt: at,
      };
      data().comments.push(comment);
      return payload({ comment: commentObject(data(), comment) });
    },

    commentUpdate(args: { id: string; input: { body?: string | null } }) {
      const comment = find(data().comments, args.id, 'Comment');
      if (args.input.body != null) comment.body = args.input.body;
      comment.updatedAt = now();
      return payload({ comment: commentObject(data(), comment) });
    },

    issueUpdate(args: { id: string; input: { stateId?: string | null } }) {
      const issue = issueByRef(data(), args.id);
      if (args.input.stateId != null) {
        // Linear refuses a state of another team: the state must be one of the issue's team.
        const team = find(data().teams, issue.teamId, 'Team');
        if (!team.stateIds.includes(args.input.stateId)) throw new EntityNotFound('WorkflowState');
        issue.stateId = args.input.stateId;
      }
      issue.updatedAt = now();
      return payload({ issue: issueObject(data(), issue) });
    },

    issueCreate(args: {
      input: {
        teamId: string;
        projectId?: string | null;
        title?: string | null;
        description?: string | null;
        stateId?: string | null;
      };
    }) {
      const { input } = args;
      const team = find(data().teams, input.teamId, 'Team');
      const stateId = input.stateId ?? team.stateIds[0] ?? '';
      if (!team.stateIds.includes(stateId)) throw new EntityNotFound('WorkflowState');
      const number = data().issues.filter((issue) => issue.teamId === team.id).length + 100;
      const at = now();
      const issue: FakeIssue = {
        id: randomUUID(),
        identifier: `${team.key}-${number}`,
        teamId: team.id,
        title: input.title ?? '',
        description: input.description ?? null,
        priority: 0,
        stateId,
        projectId: input.projectId ?? null,
        assigneeId: null,
        labels: [],
        createdAt: at,
        updatedAt: at,
      };
      data().issues.push(issue);
      return payload({ issue: issueObject(data(), issue) });
    },
  };
}
