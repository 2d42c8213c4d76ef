// A local Linear stand-in. It builds Linear's published schema
// (test/fixtures/linear/schema.graphql) and runs every query through graphql's own
// parse, validate and execute against it, so a query the real API would reject is rejected
// here too, with Linear's error shape (errors[].extensions.{type, code, statusCode,
// userError, userPresentableMessage}). Resolvers answer from FakeData. Faults (rate limits,
// 5xx, malformed bodies, pagination loops, silence) are queued per request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type GraphQLSchema, buildSchema, graphql } from 'graphql';
import {
  type FakeComment,
  type FakeData,
  type FakeIssue,
  UnsupportedFilter,
  issueMatches,
  stateOf,
  userById,
} from './linear-data.js';
import {
  type CommentBy,
  EntityNotFound,
  addLinearComment,
  commentObject,
  commentsOf,
  pagedConnection,
  teamObject,
  writeResolvers,
} from './linear-writes.js';

// Kept in the repository as test data, with its license (test/fixtures/linear/README.md).
export const LINEAR_SCHEMA_PATH = resolve(
  import.meta.dirname,
  '../../fixtures/linear/schema.graphql',
);

let schemaCache: GraphQLSchema | undefined;

/** Built once per test process: the schema is 1.2 MB and takes a few hundred ms. */
export function linearSchema(): GraphQLSchema {
  schemaCache ??= buildSchema(readFileSync(LINEAR_SCHEMA_PATH, 'utf8'));
  return schemaCache;
}

export type LinearFault =
  /** Linear's own rate limit: HTTP 400, an error coded RATELIMITED, X-RateLimit-* headers. */
  | { kind: 'ratelimited'; requestsResetMs: number }
  /** A plain HTTP 429 (a proxy in front, say) with Retry-After in seconds. */
  | { kind: 'http-429'; retryAfterSeconds: number }
  | { kind: 'status'; status: number }
  /** HTTP 200 with a truncated JSON body. */
  | { kind: 'malformed' }
  /** HTTP 200 with `errors` and no data. */
  | { kind: 'graphql-error'; message: string }
  /** A 500 whose body quotes the request's Authorization header back. */
  | { kind: 'echo-authorization' }
  /** Never answers: the client's timeout must end the request. */
  | { kind: 'hang' };

/** How issue pages link: as Linear does, or in the broken ways the adapter must catch. */
export type Pagination = 'normal' | 'repeat-cursor' | 'endless' | 'no-cursor';

export interface RecordedRequest {
  authorization: string | undefined;
  query: string;
  variables: Record<string, unknown>;
}

export interface LinearStandIn {
  url: string;
  apiKey: string;
  data: FakeData;
  requests: RecordedRequest[];
  faults: LinearFault[];
  pagination: Pagination;
  /** Edits a successful answer before it is sent (an answer that breaks the schema). */
  rewrite: ((body: Record<string, unknown>) => void) | null;
  /** A comment by a named person on the issue (id or identifier), in `data`. */
  addComment(issue: string, by: CommentBy): FakeComment;
  close(): Promise<void>;
}

function linearError(message: string, code: string, type: string, statusCode: number) {
  return {
    message,
    extensions: { type, code, statusCode, userError: true, userPresentableMessage: message },
  };
}

const encodeCursor = (id: string) => Buffer.from(`issue:${id}`).toString('base64url');
const decodeCursor = (cursor: string) =>
  Buffer.from(cursor, 'base64url')
    .toString()
    .replace(/^issue:/, '');

interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
}

function nodesConnection<T>(items: readonly T[], args: ConnectionArgs) {
  const nodes = items.slice(0, args.first ?? 50);
  return { nodes, pageInfo: { hasNextPage: items.length > nodes.length, endCursor: null } };
}

/** The object graph the schema's default resolvers walk; connections are functions of args. */
function issueObject(data: FakeData, issue: FakeIssue): Record<string, unknown> {
  const state = stateOf(data, issue);
  const assignee = userById(data, issue.assigneeId);
  return {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
    description: issue.description,
    priority: issue.priority,
    branchName: `me/${issue.identifier.toLowerCase()}-${issue.title.toLowerCase().replace(/\W+/g, '-')}`,
    url: `https://linear.app/acme/issue/${issue.identifier}`,
    createdAt: issue.createdAt,
    updatedAt: issue.updatedAt,
    state: { id: state.id, name: state.name, type: state.type },
    assignee: assignee === null ? null : { id: assignee.id, name: assignee.name },
    team: () => {
      const team = data.teams.find((candidate) => candidate.id === issue.teamId);
      if (team === undefined) throw new Error(`fixture: issue ${issue.identifier} has no team`);
      return teamObject(data, team);
    },
    comments: (args: ConnectionArgs) =>
      pagedConnection(commentsOf(data, issue.id), args, (comment) => commentObject(data, comment)),
    labels: (args: ConnectionArgs) =>
      nodesConnection(
        issue.labels.map((name, index) => ({ id: `${issue.id}-label-${index}`, name })),
        args,
      ),
    inverseRelations: (args: ConnectionArgs) =>
      nodesConnection(
        data.relations
          .filter((relation) => relation.relatedIssueId === issue.id)
          .map((relation) => ({
            id: relation.id,
            type: relation.type,
            issue: () => issueObject(data, byId(data, relation.issueId)),
            relatedIssue: () => issueObject(data, issue),
          })),
        args,
      ),
  };
}

function byId(data: FakeData, id: string): FakeIssue {
  const found = data.issues.find((issue) => issue.id === id);
  if (found === undefined) throw new Error(`fixture: no issue ${id}`);
  return found;
}

function issuesConnection(
  standIn: LinearStandIn,
  args: ConnectionArgs & { filter?: unknown; includeArchived?: boolean | null },
) {
  const { data } = standIn;
  const matching = data.issues
    .filter((issue) => args.filter == null || issueMatches(data, issue, args.filter))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const after = args.after ?? null;
  const start = after === null ? 0 : matching.findIndex((i) => i.id === decodeCursor(after)) + 1;
  const page = matching.slice(start, start + (args.first ?? 50));
  const last = page.at(-1);
  const more = start + page.length < matching.length;
  const pageInfo = {
    hasNextPage: more,
    hasPreviousPage: start > 0,
    startCursor: page[0] ? encodeCursor(page[0].id) : null,
    endCursor: last ? encodeCursor(last.id) : null,
  };
  if (standIn.pagination === 'repeat-cursor') {
    Object.assign(pageInfo, { hasNextPage: true, endCursor: 'c-same' });
  } else if (standIn.pagination === 'endless') {
    Object.assign(pageInfo, { hasNextPage: true, endCursor: `c-${standIn.requests.length}` });
  } else if (standIn.pagination === 'no-cursor') {
    Object.assign(pageInfo, { hasNextPage: true, endCursor: null });
  }
  return { nodes: page.map((issue) => issueObject(data, issue)), pageInfo };
}

function send(
  response: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  response.end(body);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function answerFault(response: ServerResponse, fault: LinearFault, authorization: string) {
  const rateHeaders = (reset: number) => ({
    'x-ratelimit-requests-limit': '5000',
    'x-ratelimit-requests-remaining': '0',
    'x-ratelimit-requests-reset': String(reset),
    'x-ratelimit-complexity-limit': '3000000',
    'x-ratelimit-complexity-remaining': '2999000',
    'x-ratelimit-complexity-reset': String(reset - 30_000),
  });
  switch (fault.kind) {
    case 'ratelimited':
      return send(
        response,
        400,
        JSON.stringify({
          errors: [linearError('Rate limit exceeded', 'RATELIMITED', 'ratelimited', 429)],
        }),
        rateHeaders(fault.requestsResetMs),
      );
    case 'http-429':
      return send(response, 429, '{"error":"Too Many Requests"}', {
        'retry-after': String(fault.retryAfterSeconds),
      });
    case 'status':
      return send(response, fault.status, 'upstream failure', { 'content-type': 'text/plain' });
    case 'malformed':
      return send(response, 200, '{"data":{"issues":{"nodes":[{"id":');
    case 'graphql-error':
      return send(
        response,
        200,
        JSON.stringify({
          data: null,
          errors: [linearError(fault.message, 'INVALID_INPUT', 'invalid input', 400)],
        }),
      );
    case 'echo-authorization':
      return send(
        response,
        500,
        JSON.stringify({
          errors: [
            linearError(`bad key ${authorization}`, 'INTERNAL_ERROR', 'internal error', 500),
          ],
        }),
      );
    case 'hang':
      return undefined;
  }
}

async function handle(standIn: LinearStandIn, request: IncomingMessage, response: ServerResponse) {
  const text = await readBody(request);
  const authorization = request.headers.authorization;
  let payload: { query?: unknown; variables?: unknown };
  try {
    payload = JSON.parse(text) as typeof payload;
  } catch {
    return send(response, 400, JSON.stringify({ errors: [{ message: 'Invalid JSON body' }] }));
  }
  const query = typeof payload.query === 'string' ? payload.query : '';
  const variables = (payload.variables ?? {}) as Record<string, unknown>;
  standIn.requests.push({ authorization, query, variables });

  const fault = standIn.faults.shift();
  if (fault !== undefined) return answerFault(response, fault, authorization ?? '');

  if (request.method !== 'POST') {
    return send(response, 405, JSON.stringify({ errors: [{ message: 'POST only' }] }));
  }
  // Personal API keys are sent bare; `Bearer <key>` is how OAuth tokens go, and fails here.
  if (authorization !== standIn.apiKey) {
    const error = linearError(
      'Authentication required, not authenticated',
      'AUTHENTICATION_ERROR',
      'authentication error',
      401,
    );
    return send(response, 400, JSON.stringify({ errors: [error] }));
  }

  const rootValue = {
    viewer: () => userById(standIn.data, standIn.data.viewerId),
    issues: (args: ConnectionArgs & { filter?: unknown }) => issuesConnection(standIn, args),
    ...writeResolvers(() => standIn.data, issueObject),
  };
  const result = await graphql({
    schema: linearSchema(),
    source: query,
    rootValue,
    variableValues: variables,
  });
  if (!('data' in result) || result.data === undefined) {
    // Parse, validation and variable errors: the request never ran (Linear answers 400).
    const errors = (result.errors ?? []).map((error) => ({
      ...linearError(error.message, 'GRAPHQL_VALIDATION_FAILED', 'graphql error', 400),
      locations: error.locations,
    }));
    return send(response, 400, JSON.stringify({ errors }));
  }
  const unsupported = result.errors?.find(
    (error) => error.originalError instanceof UnsupportedFilter,
  );
  if (unsupported) {
    return send(response, 500, JSON.stringify({ errors: [{ message: unsupported.message }] }));
  }
  const notFound = result.errors?.find((error) => error.originalError instanceof EntityNotFound);
  if (notFound) {
    const error = linearError(notFound.message, 'INVALID_INPUT', 'invalid input', 400);
    return send(response, 200, JSON.stringify({ data: null, errors: [error] }));
  }
  const body = JSON.parse(JSON.stringify(result)) as Record<string, unknown>;
  standIn.rewrite?.(body);
  return send(response, 200, JSON.stringify(body));
}

/** Start the stand-in on a free loopback port, accepting `apiKey` as a personal API key. */
export async function startLinearStandIn(data: FakeData, apiKey: string): Promise<LinearStandIn> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const standIn: LinearStandIn = {
    url: `http://127.0.0.1:${port}/graphql`,
    apiKey,
    data,
    requests: [],
    faults: [],
    pagination: 'normal',
    rewrite: null,
    addComment: (issue, by) => addLinearComment(standIn.data, issue, by),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    handle(standIn, request, response).catch((error: unknown) => {
      send(response, 500, JSON.stringify({ errors: [{ message: String(error) }] }));
    });
  });
  return standIn;
}
