// A local Jira Cloud stand-in speaking REST v3 as Atlassian documents it: the enhanced JQL
// search (POST /rest/api/3/search/jql, token pagination: nextPageToken + isLast), bulk fetch
// (POST /rest/api/3/issue/bulkfetch: issues + issueErrors, unknown ids left out), the status
// list (GET /rest/api/3/status), Basic auth with email:token, and Jira's error body
// {"errorMessages": [...], "errors": {}}. It understands the JQL the adapter writes (project,
// status in, a parenthesised labels/assignee clause, ORDER BY key) and answers anything else
// with Jira's 400, as it does a status the site does not have. Faults are queued per request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeJiraIssue, STATUSES, fixtureIssues, issueBean } from './jira-data.js';
import {
  type CommentBy,
  type FakeJiraComment,
  addJiraComment,
  jiraWriteAnswer,
} from './jira-writes.js';

export type JiraFault =
  | { kind: 'http-429'; retryAfterSeconds: number }
  /** A 429 with only X-RateLimit-Reset (ISO-8601), no Retry-After. */
  | { kind: 'http-429-reset'; resetAt: string }
  | { kind: 'status'; status: number }
  /** HTTP 200 with a truncated JSON body. */
  | { kind: 'malformed' }
  /** HTTP 200 with a JSON answer missing `issues`. */
  | { kind: 'no-issues' }
  /** A 500 whose body quotes the request's Authorization header and the decoded token. */
  | { kind: 'echo-authorization' }
  /** bulkfetch: the first id in issueErrors (a retriable failure). */
  | { kind: 'issue-errors' }
  | { kind: 'hang' };

/** How search pages link: as Jira does, or in the broken ways the adapter must catch. */
export type JiraPagination =
  'normal' | 'no-is-last' | 'repeat-token' | 'endless' | 'not-last-no-token';

export interface JiraRequestRecord {
  method: string;
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown> | null;
}

export interface JiraStandIn {
  url: string;
  issues: FakeJiraIssue[];
  comments: FakeJiraComment[];
  /** The most comments one page holds, whatever maxResults asks. */
  commentPageCap: number;
  /** A comment by a named person on the issue (key or id). */
  addComment(issue: string, by: CommentBy): FakeJiraComment;
  requests: JiraRequestRecord[];
  faults: JiraFault[];
  pagination: JiraPagination;
  /** The most issues one search page holds, whatever maxResults asks (Jira may cut pages). */
  pageCap: number;
  close(): Promise<void>;
}

const errorBody = (...messages: string[]) =>
  JSON.stringify({ errorMessages: messages, errors: {} });

function send(response: ServerResponse, status: number, body: string, headers = {}) {
  response.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', ...headers });
  response.end(body);
}

class JqlError extends Error {}

/** A JQL value: a quoted string (with \" and \\ escapes) or a bare word. */
function jqlValue(text: string): string {
  const quoted = /^"((?:[^"\\]|\\.)*)"$/.exec(text.trim());
  if (quoted) return (quoted[1] ?? '').replace(/\\(.)/g, '$1');
  if (/^[\w.-]+$/.test(text.trim())) return text.trim();
  throw new JqlError(`Error in the JQL Query: the value ${text.trim()} is not valid`);
}

/** Split on a separator outside quotes and parentheses. */
function splitTop(text: string, separator: RegExp): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (char === '\\' && quoted) i += 1;
    else if (char === '"') quoted = !quoted;
    else if (!quoted && char === '(') depth += 1;
    else if (!quoted && char === ')') depth -= 1;
    else if (!quoted && depth === 0) {
      const match = separator.exec(text.slice(i));
      if (match?.index === 0) {
        parts.push(text.slice(start, i));
        start = i + match[0].length;
        i = start - 1;
      }
    }
  }
  parts.push(text.slice(start));
  return parts.map((part) => part.trim());
}

type Predicate = (issue: FakeJiraIssue) => boolean;

function clause(text: string): Predicate {
  if (text.startsWith('(') && text.endsWith(')')) return conjunction(text.slice(1, -1));
  const project = /^project\s*=\s*(.+)$/i.exec(text);
  if (project) {
    const key = jqlValue(project[1] ?? '').toUpperCase();
    return (issue) => issue.key.startsWith(`${key}-`);
  }
  const status = /^status\s+in\s*\((.*)\)$/i.exec(text);
  if (status) {
    const names = splitTop(status[1] ?? '', /^,/).map(jqlValue);
    for (const name of names) {
      if (!Object.keys(STATUSES).some((known) => known.toLowerCase() === name.toLowerCase())) {
        throw new JqlError(`The value '${name}' does not exist for the field 'status'.`);
      }
    }
    const wanted = new Set(names.map((name) => name.toLowerCase()));
    return (issue) => wanted.has(issue.status.toLowerCase());
  }
  const labels = /^labels\s*=\s*(.+)$/i.exec(text);
  if (labels) {
    const label = jqlValue(labels[1] ?? '');
    return (issue) => issue.labels.includes(label);
  }
  throw new JqlError(`Error in the JQL Query: cannot read the clause '${text}'.`);
}

function conjunction(text: string): Predicate {
  const predicates = splitTop(text, /^\s+AND\s+/i).map(clause);
  return (issue) => predicates.every((predicate) => predicate(issue));
}

/** The issues a JQL query selects, in key order (the only ORDER BY the stand-in knows). */
function runJql(issues: readonly FakeJiraIssue[], jql: string): FakeJiraIssue[] {
  const [where = '', order] = jql.split(/\s+ORDER BY\s+/i);
  if (order !== undefined && !/^key\s+ASC$/i.test(order.trim())) {
    throw new JqlError(`Error in the JQL Query: cannot order by '${order}'.`);
  }
  if (where.trim() === '') throw new JqlError('Unbounded JQL queries are not allowed here.');
  const number = (key: string) => Number(key.split('-')[1]);
  return issues.filter(conjunction(where)).sort((a, b) => number(a.key) - number(b.key));
}

const encodeToken = (offset: number) => Buffer.from(`offset:${offset}`).toString('base64url');
const decodeToken = (token: string) =>
  Number(
    Buffer.from(token, 'base64url')
      .toString()
      .replace(/^offset:/, ''),
  );

function stringList(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((item) => typeof item === 'string') ? value : null;
}

function search(standIn: JiraStandIn, body: Record<string, unknown>, response: ServerResponse) {
  const fields = stringList(body.fields) ?? [];
  const maxResults = typeof body.maxResults === 'number' ? body.maxResults : 50;
  if (typeof body.jql !== 'string' || 'startAt' in body || maxResults < 1 || maxResults > 5000) {
    return send(response, 400, errorBody('Invalid request payload.'));
  }
  let matched: FakeJiraIssue[];
  try {
    matched = runJql(standIn.issues, body.jql);
  } catch (error) {
    if (error instanceof JqlError) return send(response, 400, errorBody(error.message));
    throw error;
  }
  const token = typeof body.nextPageToken === 'string' ? body.nextPageToken : null;
  const offset = token === null ? 0 : decodeToken(token);
  const size = Math.min(maxResults, standIn.pageCap);
  const page = matched.slice(offset, offset + size);
  const more = offset + size < matched.length;
  const beans = page.map((issue) => issueBean(standIn.url, standIn.issues, issue, fields));
  const answer: Record<string, unknown> = { issues: beans };
  switch (standIn.pagination) {
    case 'normal':
      Object.assign(answer, more ? { nextPageToken: encodeToken(offset + size) } : {}, {
        isLast: !more,
      });
      break;
    case 'no-is-last':
      Object.assign(answer, more ? { nextPageToken: encodeToken(offset + size) } : {});
      break;
    case 'repeat-token':
      Object.assign(answer, { nextPageToken: encodeToken(0), isLast: false });
      break;
    case 'endless':
      Object.assign(answer, { nextPageToken: encodeToken(offset + 1), isLast: false });
      break;
    case 'not-last-no-token':
      Object.assign(answer, { isLast: false });
      break;
  }
  send(response, 200, JSON.stringify(answer));
}

function bulkFetch(
  standIn: JiraStandIn,
  body: Record<string, unknown>,
  response: ServerResponse,
  fault?: JiraFault,
) {
  const ids = stringList(body.issueIdsOrKeys);
  if (ids === null || ids.length === 0 || ids.length > 100) {
    return send(response, 400, errorBody('issueIdsOrKeys must hold 1 to 100 ids or keys.'));
  }
  const fields = stringList(body.fields) ?? [];
  const found = standIn.issues.filter((issue) =>
    ids.some((id) => id === issue.id || id.toUpperCase() === issue.key),
  );
  const failed = fault?.kind === 'issue-errors' ? found.slice(0, 1) : [];
  send(
    response,
    200,
    JSON.stringify({
      issues: found
        .filter((issue) => !failed.includes(issue))
        .sort((a, b) => Number(a.id) - Number(b.id))
        .map((issue) => issueBean(standIn.url, standIn.issues, issue, fields)),
      issueErrors: failed.map((issue) => ({ id: issue.id, errorMessage: 'Please retry.' })),
    }),
  );
}

function statuses(standIn: JiraStandIn, response: ServerResponse) {
  const list = Object.entries(STATUSES).map(([name, status]) => ({
    self: `${standIn.url}/rest/api/3/status/${status.id}`,
    description: '',
    iconUrl: `${standIn.url}/images/icons/statuses/generic.png`,
    name,
    untranslatedName: name,
    id: status.id,
    statusCategory: { key: status.category },
  }));
  send(response, 200, JSON.stringify(list));
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Answers a fault, or returns false when the request goes on as usual. */
function sendFault(
  fault: JiraFault | undefined,
  request: IncomingMessage,
  response: ServerResponse,
) {
  switch (fault?.kind) {
    case 'http-429':
      send(response, 429, errorBody('Rate limit exceeded.'), {
        'retry-after': String(fault.retryAfterSeconds),
        'x-ratelimit-limit': '100',
        'x-ratelimit-remaining': '0',
        'ratelimit-reason': 'jira-quota-based',
      });
      return true;
    case 'http-429-reset':
      send(response, 429, errorBody('Rate limit exceeded.'), {
        'x-ratelimit-reset': fault.resetAt,
      });
      return true;
    case 'status':
      send(response, fault.status, errorBody(`The stand-in answers ${fault.status}.`));
      return true;
    case 'malformed':
      send(response, 200, '{"issues": [{"id": "100');
      return true;
    case 'no-issues':
      send(response, 200, JSON.stringify({ isLast: true }));
      return true;
    case 'echo-authorization': {
      const header = request.headers.authorization ?? '';
      const decoded = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString();
      send(response, 500, errorBody(`Bad credentials ${header} (${decoded})`));
      return true;
    }
    case 'hang':
      return true;
    // issue-errors changes a bulk fetch's answer rather than replacing it.
    case 'issue-errors':
    case undefined:
      return false;
  }
}

async function handle(
  standIn: JiraStandIn,
  expectedAuth: string,
  request: IncomingMessage,
  response: ServerResponse,
) {
  const text = await readBody(request);
  const url = new URL(request.url ?? '/', standIn.url);
  const path = url.pathname;
  let body: Record<string, unknown> | null = null;
  if (request.method === 'POST' || request.method === 'PUT') {
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return send(response, 400, errorBody('Unexpected character in the request body.'));
    }
  }
  standIn.requests.push({
    method: request.method ?? '',
    path,
    authorization: request.headers.authorization,
    body,
  });
  const fault = standIn.faults.shift();
  if (fault?.kind !== 'issue-errors' && sendFault(fault, request, response)) return;
  if (request.headers.authorization !== expectedAuth) {
    response.writeHead(401, { 'content-type': 'text/plain;charset=UTF-8' });
    response.end('Client must be authenticated to access this resource.');
    return;
  }
  if (request.method === 'GET' && path === '/rest/api/3/status') return statuses(standIn, response);
  if (request.method === 'POST' && body !== null && path === '/rest/api/3/search/jql') {
    return search(standIn, body, response);
  }
  if (request.method === 'POST' && body !== null && path === '/rest/api/3/issue/bulkfetch') {
    return bulkFetch(standIn, body, response, fault);
  }
  const written = jiraWriteAnswer(standIn, request.method ?? 'GET', url, body);
  if (written !== null) {
    if (written.status === 204) {
      response.writeHead(204);
      response.end();
      return;
    }
    return send(response, written.status, JSON.stringify(written.body));
  }
  if (path === '/rest/api/3/search') {
    // The legacy search is gone from Jira Cloud.
    return send(
      response,
      410,
      errorBody('The requested API has been removed. Please migrate to /rest/api/3/search/jql.'),
    );
  }
  send(response, 404, errorBody('Not found.'));
}

export async function startJiraStandIn(email: string, token: string): Promise<JiraStandIn> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const expectedAuth = `Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`;
  const standIn: JiraStandIn = {
    url: `http://127.0.0.1:${port}`,
    issues: fixtureIssues(),
    comments: [],
    commentPageCap: 100,
    addComment: (issue, by) => addJiraComment(standIn, issue, by),
    requests: [],
    faults: [],
    pagination: 'normal',
    pageCap: 100,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    handle(standIn, expectedAuth, request, response).catch((error: unknown) => {
      send(response, 500, errorBody(String(error)));
    });
  });
  return standIn;
}
