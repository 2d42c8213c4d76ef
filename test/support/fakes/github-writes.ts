// The writing half of the GitHub stand-in: repository labels, issue comments (list, create,
// get, edit), issue edits (labels, open/closed) and new issues, applied to the stand-in's
// state so that the next read sees them. Request bodies are checked against the documented
// schemas by the server before they get here; answers are checked on the way out.
import {
  type FakeComment,
  type FakeIssue,
  githubIssue,
  githubIssueComment,
  githubLabel,
} from './github-data.js';
import { DOCS, notFound } from './github-pulls.js';
import { isMap, secondsFrom } from './stand-in-clock.js';

export interface WriteState {
  repository: string;
  issues: FakeIssue[];
  comments: FakeComment[];
  /** Labels the repository has besides those on its issues. */
  labels: string[];
  /** Comments per page at most, whatever per_page asks (to exercise Link pagination). */
  commentPageSize: number;
}

export interface WriteAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

type Json = Record<string, unknown>;

const invalid = (field: string): WriteAnswer => ({
  status: 422,
  body: {
    message: 'Validation Failed',
    errors: [{ resource: 'Issue', code: 'missing_field', field }],
    documentation_url: DOCS,
  },
});

// A clock of its own, so every write gets a later time than the fixtures' dates.
const clock = secondsFrom('2026-03-01T00:00:00Z');
const stamp = (): string => clock().toISOString().replace('.000', '');

function labelNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value
    .map((label) => (typeof label === 'string' ? label : isMap(label) ? label.name : undefined))
    .filter((name): name is string => typeof name === 'string');
}

/** GitHub keeps one label per name, compared case-insensitively; the first spelling stays. */
function repositoryLabels(state: WriteState): string[] {
  const seen = new Map<string, string>();
  for (const name of [...state.labels, ...state.issues.flatMap((issue) => issue.labels ?? [])]) {
    if (!seen.has(name.toLowerCase())) seen.set(name.toLowerCase(), name);
  }
  return [...seen.values()];
}

/** As GitHub does, a label named in a write that the repository lacks is created. */
function adopt(state: WriteState, names: readonly string[]): string[] {
  const known = repositoryLabels(state);
  return names.map((name) => {
    const found = known.find((label) => label.toLowerCase() === name.toLowerCase());
    if (found === undefined) state.labels.push(name);
    return found ?? name;
  });
}

function editIssue(state: WriteState, issue: FakeIssue, body: Json): WriteAnswer {
  if (typeof body.title === 'string') issue.title = body.title;
  if (typeof body.body === 'string' || body.body === null) issue.body = body.body;
  if (Array.isArray(body.labels)) issue.labels = adopt(state, labelNames(body.labels));
  if (body.state === 'open' || body.state === 'closed') issue.state = body.state;
  return { status: 200, body: githubIssue(state.repository, issue) };
}

function createIssue(state: WriteState, body: Json): WriteAnswer {
  if (typeof body.title !== 'string' || body.title.trim() === '') return invalid('title');
  const number = Math.max(0, ...state.issues.map((issue) => issue.number)) + 1;
  const issue: FakeIssue = {
    number,
    title: body.title,
    state: 'open',
    body: typeof body.body === 'string' ? body.body : null,
    labels: adopt(state, labelNames(body.labels)),
    createdAt: stamp(),
  };
  state.issues.push(issue);
  return { status: 201, body: githubIssue(state.repository, issue) };
}

function commentAnswer(state: WriteState, comment: FakeComment, status = 200): WriteAnswer {
  return { status, body: githubIssueComment(state.repository, comment) };
}

/**
 * The answer to a request under `/repos/<repository>` that the read half does not serve, or
 * null when no route takes it. `rest` is the path after the repository.
 */
/** One page of an issue's comments, with a Link to the next page as GitHub gives it. */
function commentPage(state: WriteState, number: number, url: URL): WriteAnswer {
  const mine = state.comments.filter((comment) => comment.issue === number);
  const asked = Number(url.searchParams.get('per_page') ?? 30);
  const size = Math.min(asked, state.commentPageSize);
  const page = Number(url.searchParams.get('page') ?? 1);
  const items = mine.slice((page - 1) * size, page * size);
  const headers: Record<string, string> = {};
  if (page * size < mine.length) {
    const next = new URL(url);
    next.searchParams.set('page', String(page + 1));
    headers.link = `<${next.toString()}>; rel="next"`;
  }
  return {
    status: 200,
    body: items.map((comment) => githubIssueComment(state.repository, comment)),
    headers,
  };
}

export interface CommentBy {
  /** The commenter's login. */
  author: string;
  body: string;
  authorId?: number;
  createdAt?: string;
}

/** A comment by a named person on issue `number`, as a test adds one; read back over REST. */
export function addGithubComment(state: WriteState, number: number, by: CommentBy): FakeComment {
  const at = by.createdAt ?? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const comment: FakeComment = {
    id: 7_000_000 + state.comments.length + 1,
    issue: number,
    body: by.body,
    createdAt: at,
    updatedAt: at,
    author: by.author,
    ...(by.authorId === undefined ? {} : { authorId: by.authorId }),
  };
  state.comments.push(comment);
  return comment;
}

export function writeAnswer(
  state: WriteState,
  method: string,
  url: URL,
  rest: string,
  body: unknown,
): WriteAnswer | null {
  const json = isMap(body) ? body : {};
  if (method === 'GET' && rest === '/labels') {
    return {
      status: 200,
      body: repositoryLabels(state).map((name, index) =>
        githubLabel(state.repository, name, 9000 + index),
      ),
    };
  }
  if (method === 'POST' && rest === '/issues') return createIssue(state, json);
  const issueMatch = /^\/issues\/(\d+)(\/comments)?$/.exec(rest);
  if (issueMatch !== null) {
    const number = Number(issueMatch[1]);
    const issue = state.issues.find((candidate) => candidate.number === number);
    if (issue === undefined) return notFound();
    if (issueMatch[2] === undefined)
      return method === 'PATCH' ? editIssue(state, issue, json) : null;
    if (method === 'GET') return commentPage(state, number, url);
    if (method !== 'POST') return null;
    if (typeof json.body !== 'string' || json.body === '') return invalid('body');
    const id = 7_000_000 + state.comments.length + 1;
    const at = stamp();
    const comment = { id, issue: number, body: json.body, createdAt: at, updatedAt: at };
    state.comments.push(comment);
    return commentAnswer(state, comment, 201);
  }
  const commentMatch = /^\/issues\/comments\/(\d+)$/.exec(rest);
  if (commentMatch !== null) {
    const comment = state.comments.find((candidate) => candidate.id === Number(commentMatch[1]));
    if (comment === undefined) return notFound();
    if (method === 'GET') return commentAnswer(state, comment);
    if (method !== 'PATCH') return null;
    if (typeof json.body !== 'string' || json.body === '') return invalid('body');
    comment.body = json.body;
    comment.updatedAt = stamp();
    return commentAnswer(state, comment);
  }
  return null;
}
