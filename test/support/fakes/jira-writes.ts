// The writing half of the Jira stand-in, in REST v3's documented shapes: one issue
// (GET /rest/api/3/issue/{idOrKey}?fields=…), its comments (PageOfComments with
// startAt/maxResults/total; POST and PUT take an ADF body), its transitions (GET lists those
// reachable from the current status, POST {transition: {id}} answers 204) and new issues
// (POST /rest/api/3/issue answers 201 {id, key, self}). Writes change the stand-in's issues,
// so the next search or read sees them.
import { type FakeJiraIssue, STATUSES, issueBean, statusBean } from './jira-data.js';
import { isMap, secondsFrom } from './stand-in-clock.js';

/** A Jira Cloud user as a comment's author shows it. */
export interface FakeJiraUser {
  accountId: string;
  displayName: string;
  /** Absent when the user's profile visibility hides it, as Jira Cloud does. */
  emailAddress?: string;
}

/** The account the API token belongs to: the author of comments made through the API. */
export const JIRA_TOKEN_USER: FakeJiraUser = {
  accountId: '5b10a2844c20165700ede21g',
  displayName: 'Agent Bot',
};

export interface FakeJiraComment {
  id: string;
  issueId: string;
  body: unknown;
  created: string;
  updated: string;
  /** Absent: the token's user. */
  author?: FakeJiraUser;
}

export interface JiraWriteState {
  url: string;
  issues: FakeJiraIssue[];
  comments: FakeJiraComment[];
  /** The most comments one page holds, whatever maxResults asks. */
  commentPageCap: number;
}

export interface JiraAnswer {
  status: number;
  body: unknown;
}

type Json = Record<string, unknown>;

const errors = (status: number, messages: string[], fields: Json = {}): JiraAnswer => ({
  status,
  body: { errorMessages: messages, errors: fields },
});
const noIssue = () =>
  errors(404, ['Issue does not exist or you do not have permission to see it.']);

/** The site's workflow: every status reaches every other, except Todo → Done directly. */
export function reachableFrom(status: string): string[] {
  return Object.keys(STATUSES).filter(
    (name) => name !== status && !(status === 'Todo' && name === 'Done'),
  );
}

const clock = secondsFrom('2026-03-01T00:00:00Z');
const now = (): string => clock().toISOString().replace('Z', '+0000');

/** What Jira checks of an ADF body: a doc of version 1 whose text nodes are not empty. */
function validAdf(doc: unknown): boolean {
  if (!isMap(doc) || doc.type !== 'doc' || doc.version !== 1 || !Array.isArray(doc.content)) {
    return false;
  }
  const walk = (node: unknown): boolean => {
    if (!isMap(node) || typeof node.type !== 'string') return false;
    if (node.type === 'text') return typeof node.text === 'string' && node.text !== '';
    return node.content === undefined || (Array.isArray(node.content) && node.content.every(walk));
  };
  return doc.content.length > 0 && doc.content.every(walk);
}

function commentBean(site: string, comment: FakeJiraComment): Json {
  const author = { ...(comment.author ?? JIRA_TOKEN_USER), active: true };
  return {
    self: `${site}/rest/api/3/issue/${comment.issueId}/comment/${comment.id}`,
    id: comment.id,
    author,
    body: comment.body,
    updateAuthor: author,
    created: comment.created,
    updated: comment.updated,
    jsdPublic: true,
  };
}

function comments(state: JiraWriteState, issue: FakeJiraIssue, url: URL): JiraAnswer {
  const startAt = Number(url.searchParams.get('startAt') ?? 0);
  const asked = Number(url.searchParams.get('maxResults') ?? 5000);
  const maxResults = Math.min(asked, state.commentPageCap);
  const mine = state.comments.filter((comment) => comment.issueId === issue.id);
  return {
    status: 200,
    body: {
      startAt,
      maxResults,
      total: mine.length,
      comments: mine
        .slice(startAt, startAt + maxResults)
        .map((comment) => commentBean(state.url, comment)),
    },
  };
}

function transitions(state: JiraWriteState, issue: FakeJiraIssue): JiraAnswer {
  return {
    status: 200,
    body: {
      expand: 'transitions',
      transitions: reachableFrom(issue.status).map((name) => ({
        id: `7${STATUSES[name]?.id ?? '0'}`,
        name: `Move to ${name}`,
        to: statusBean(state.url, name),
        hasScreen: false,
        isGlobal: true,
        isInitial: false,
        isAvailable: true,
        isConditional: false,
        isLooped: false,
      })),
    },
  };
}

function transition(issue: FakeJiraIssue, body: Json): JiraAnswer {
  const id = isMap(body.transition) ? body.transition.id : undefined;
  const target = reachableFrom(issue.status).find((name) => `7${STATUSES[name]?.id}` === id);
  if (target === undefined) {
    return errors(400, [`Transition id '${String(id)}' is not valid for this issue.`]);
  }
  issue.status = target;
  issue.updated = now();
  return { status: 204, body: null };
}

function writeComment(
  state: JiraWriteState,
  issue: FakeJiraIssue,
  body: Json,
  commentId: string | undefined,
): JiraAnswer {
  if (!validAdf(body.body)) return errors(400, [], { comment: 'Comment body is not valid!' });
  if (commentId === undefined) {
    const at = now();
    const comment = {
      id: String(20_000 + state.comments.length + 1),
      issueId: issue.id,
      body: body.body,
      created: at,
      updated: at,
    };
    state.comments.push(comment);
    return { status: 201, body: commentBean(state.url, comment) };
  }
  const found = state.comments.find((c) => c.id === commentId && c.issueId === issue.id);
  if (found === undefined) return errors(404, ['Can not find a comment for the id.']);
  found.body = body.body;
  found.updated = now();
  return { status: 200, body: commentBean(state.url, found) };
}

export interface CommentBy {
  author: string;
  body: string;
  accountId?: string;
  email?: string;
  created?: string;
}

/**
 * A comment by a named person on an issue (by key or id), as a test adds one: its body in
 * ADF and its author with accountId and, when given, emailAddress, as REST v3 answers them.
 */
export function addJiraComment(state: JiraWriteState, issueRef: string, by: CommentBy) {
  const issue = state.issues.find(
    (candidate) => candidate.key === issueRef || candidate.id === issueRef,
  );
  if (issue === undefined) throw new Error(`fixture: no Jira issue ${issueRef}`);
  const at = by.created ?? new Date().toISOString().replace('Z', '+0000');
  const slug = by.author.toLowerCase().replace(/[^a-z0-9]+/g, '');
  const comment: FakeJiraComment = {
    id: String(20_000 + state.comments.length + 1),
    issueId: issue.id,
    body: {
      type: 'doc',
      version: 1,
      content: by.body.split('\n').map((line) => ({
        type: 'paragraph',
        content: line === '' ? [] : [{ type: 'text', text: line }],
      })),
    },
    created: at,
    updated: at,
    author: {
      accountId: by.accountId ?? `712020:${slug}`,
      displayName: by.author,
      ...(by.email === undefined ? {} : { emailAddress: by.email }),
    },
  };
  state.comments.push(comment);
  return comment;
}

function createIssue(state: JiraWriteState, body: Json): JiraAnswer {
  const fields = isMap(body.fields) ? body.fields : {};
  const project = isMap(fields.project) ? fields.project.key : undefined;
  const type = isMap(fields.issuetype) ? fields.issuetype.name : undefined;
  const problems: Json = {};
  if (project !== 'ENG' && project !== 'OPS') problems.project = 'valid project is required';
  if (type !== 'Task') problems.issuetype = 'valid issue type is required';
  if (typeof fields.summary !== 'string' || fields.summary.trim() === '') {
    problems.summary = 'You must specify a summary of the issue.';
  }
  if (fields.description !== undefined && !validAdf(fields.description)) {
    problems.description = 'Operation value must be an Atlassian Document.';
  }
  if (Object.keys(problems).length > 0) return errors(400, [], problems);
  const numbers = state.issues
    .filter((issue) => issue.key.startsWith(`${String(project)}-`))
    .map((issue) => Number(issue.key.split('-')[1]));
  const n = Math.max(0, ...numbers) + 1;
  const id = String(Math.max(...state.issues.map((issue) => Number(issue.id))) + 1);
  const at = now();
  state.issues.push({
    id,
    key: `${String(project)}-${n}`,
    summary: String(fields.summary),
    status: 'Todo',
    priority: 'Medium',
    labels: [],
    blockedBy: [],
    description: fields.description ?? null,
    assignee: null,
    created: at,
    updated: at,
  });
  return {
    status: 201,
    body: { id, key: `${String(project)}-${n}`, self: `${state.url}/rest/api/3/issue/${id}` },
  };
}

/** The answer to a write-side route, or null when none takes the request. */
export function jiraWriteAnswer(
  state: JiraWriteState,
  method: string,
  url: URL,
  body: Json | null,
): JiraAnswer | null {
  if (method === 'POST' && url.pathname === '/rest/api/3/issue') {
    return createIssue(state, body ?? {});
  }
  const match = /^\/rest\/api\/3\/issue\/([^/]+)(?:\/(comment|transitions)(?:\/([^/]+))?)?$/.exec(
    url.pathname,
  );
  if (match === null || match[1] === 'bulkfetch') return null;
  const idOrKey = decodeURIComponent(match[1] ?? '');
  const issue = state.issues.find((i) => i.id === idOrKey || i.key === idOrKey.toUpperCase());
  if (issue === undefined) return noIssue();
  const [, , part, sub] = match;
  const fields = (url.searchParams.get('fields') ?? '').split(',').filter((f) => f !== '');
  if (part === undefined && method === 'GET') {
    return { status: 200, body: issueBean(state.url, state.issues, issue, fields) };
  }
  if (part === 'comment' && sub === undefined && method === 'GET') {
    return comments(state, issue, url);
  }
  if (part === 'comment' && sub === undefined && method === 'POST') {
    return writeComment(state, issue, body ?? {}, undefined);
  }
  if (part === 'comment' && sub !== undefined && method === 'PUT') {
    return writeComment(state, issue, body ?? {}, sub);
  }
  if (part === 'transitions' && sub === undefined && method === 'GET') {
    return transitions(state, issue);
  }
  if (part === 'transitions' && sub === undefined && method === 'POST') {
    return transition(issue, body ?? {});
  }
  return null;
}
