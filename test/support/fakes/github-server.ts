// A local GitHub REST stand-in. Every request is checked against GitHub's OpenAPI
// description (a documented path, documented query parameters with fitting values) and the
// headers GitHub asks for; every answer it builds is checked against the schema documented
// for that operation and status. Problems land in `violations`, which the tests expect to
// stay empty. It keeps GitHub's rate-limit budget (304s are free), ETags, Link pagination,
// and can replay answers recorded by @octokit/fixtures. Faults are queued per request.
// The code-host routes (pull requests, reviews, checks, the GraphQL ready mutation) live in
// github-pulls.ts and github-graphql.ts; `prefix` serves it all as GitHub Enterprise Server
// does, under /api/v3 (GraphQL under /api/graphql).
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type FakeComment,
  type FakeIssue,
  type RecordedInteraction,
  githubIssue,
} from './github-data.js';
import {
  type Operation,
  checkRequest,
  checkRequestBody,
  checkResponse,
  findOperation,
} from './github-openapi.js';
import { type GithubFault, faultAnswer, recordedAnswer } from './github-faults.js';
import { graphqlAnswer } from './github-graphql.js';
import { type PullDrivers, pullDrivers } from './github-pull-drivers.js';
import {
  type BranchHeadLookup,
  type PullState,
  createPullState,
  pullRoute,
  userAnswer,
} from './github-pulls.js';
import { type CommentBy, addGithubComment, writeAnswer } from './github-writes.js';

/** How pages link: as GitHub does, or in the broken ways the adapter must catch. */
export type Pagination = 'normal' | 'repeat-next' | 'endless' | 'foreign-next';

export type { GithubFault } from './github-faults.js';

export interface RecordedRequest {
  method: string;
  url: URL;
  authorization: string | undefined;
  ifNoneMatch: string | undefined;
  status: number;
  /** The parsed JSON body of a write; undefined for a request without one. */
  body: unknown;
}

export interface GithubStandIn extends PullDrivers {
  /** The API root: the origin, or with `prefix` (Enterprise) the origin and /api/v3. */
  url: string;
  token: string;
  repository: string;
  issues: FakeIssue[];
  /** Issue comments, written through the API or seeded by a test. */
  comments: FakeComment[];
  /** Repository labels besides those on issues (labels a write names are added here). */
  labels: string[];
  /** Comments per page at most (Link pagination of issue comments). */
  commentPageSize: number;
  /** A comment by a named person (a login) on issue `number`. */
  addComment(number: number, by: CommentBy): FakeComment;
  requests: RecordedRequest[];
  violations: string[];
  faults: GithubFault[];
  pagination: Pagination;
  rateLimit: { limit: number; remaining: number; resetEpochSeconds: number };
  /** Answers recorded by @octokit/fixtures, served in order before anything else. */
  replay: RecordedInteraction[];
  /** Edits the list of items before it is sent (items that break the schema). */
  rewrite: ((items: Record<string, unknown>[]) => unknown[]) | null;
  /** The code host's state: pull requests, reviews, comments, checks, the token's login. */
  pullState: PullState;
  /** Conditional requests answered 304 (free of rate limit). */
  conditionalHits: number;
  close(): Promise<void>;
}

const DOCS = 'https://docs.github.com/rest';

function etagOf(text: string): string {
  return `W/"${createHash('sha256').update(text).digest('hex').slice(0, 32)}"`;
}

function pageUrl(standIn: GithubStandIn, url: URL, page: number): string {
  const next = new URL(url.pathname + url.search, standIn.url);
  next.searchParams.set('page', String(page));
  return next.toString();
}

/** GitHub's Link header: next and last, prev and first, as the page has them. */
function linkHeader(standIn: GithubStandIn, url: URL, page: number, last: number): string | null {
  const links: string[] = [];
  if (standIn.pagination === 'foreign-next') {
    links.push(`<https://elsewhere.example/issues?page=${page + 1}>; rel="next"`);
  } else if (standIn.pagination === 'repeat-next') {
    links.push(`<${pageUrl(standIn, url, page)}>; rel="next"`);
  } else if (standIn.pagination === 'endless' || page < last) {
    links.push(`<${pageUrl(standIn, url, page + 1)}>; rel="next"`);
    if (standIn.pagination === 'normal') links.push(`<${pageUrl(standIn, url, last)}>; rel="last"`);
  }
  if (page > 1) {
    links.push(`<${pageUrl(standIn, url, page - 1)}>; rel="prev"`);
    links.push(`<${pageUrl(standIn, url, 1)}>; rel="first"`);
  }
  return links.length > 0 ? links.join(', ') : null;
}

interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

function listIssues(standIn: GithubStandIn, url: URL): Answer {
  const state = url.searchParams.get('state') ?? 'open';
  const assignee = url.searchParams.get('assignee');
  const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
  const page = Number(url.searchParams.get('page') ?? 1);
  const direction = url.searchParams.get('direction') ?? 'desc';
  const matching = standIn.issues
    .filter((issue) => state === 'all' || (issue.state ?? 'open') === state)
    .filter((issue) => assignee === null || (issue.assignees ?? []).includes(assignee))
    .map((issue) => githubIssue(standIn.repository, issue))
    .sort(
      (a, b) =>
        String(a.created_at).localeCompare(String(b.created_at)) ||
        Number(a.number) - Number(b.number),
    );
  if (direction === 'desc') matching.reverse();
  const last = Math.max(1, Math.ceil(matching.length / perPage));
  const items = matching.slice((page - 1) * perPage, page * perPage);
  const link = linkHeader(standIn, url, page, last);
  return {
    status: 200,
    body: standIn.rewrite === null ? items : standIn.rewrite(items),
    headers: link === null ? {} : { link },
  };
}

function getIssue(standIn: GithubStandIn, number: number): Answer {
  const found = standIn.issues.find((issue) => issue.number === number);
  if (found === undefined) {
    return { status: 404, body: { message: 'Not Found', documentation_url: DOCS, status: '404' } };
  }
  return { status: 200, body: githubIssue(standIn.repository, found) };
}

function rateHeaders(standIn: GithubStandIn): Record<string, string> {
  const { limit, remaining, resetEpochSeconds } = standIn.rateLimit;
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-used': String(limit - remaining),
    'x-ratelimit-reset': String(resetEpochSeconds),
    'x-ratelimit-resource': 'core',
  };
}

/** Which documented operation a path is, `/repositories/{id}/…` read as GitHub reads it. */
function operationFor(method: string, url: URL): Operation | null {
  const aliased = url.pathname.replace(/^\/repositories\/\d+\//, '/repos/owner/repo/');
  return findOperation(method, aliased)?.operation ?? null;
}

function checkHeaders(standIn: GithubStandIn, request: IncomingMessage): string[] {
  const problems: string[] = [];
  if (request.headers.authorization !== `Bearer ${standIn.token}`) {
    problems.push('Authorization is not `Bearer <token>`');
  }
  if (request.headers.accept !== 'application/vnd.github+json') {
    problems.push(`Accept is ${String(request.headers.accept)}`);
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(String(request.headers['x-github-api-version']))) {
    problems.push('X-GitHub-Api-Version is missing or not a version date');
  }
  if ((request.headers['user-agent'] ?? '') === '') problems.push('no User-Agent');
  return problems;
}

function parseBody(standIn: GithubStandIn, method: string, url: URL, text: string): unknown {
  if (text === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    standIn.violations.push(`${method} ${url.pathname}: the body is not JSON`);
    return undefined;
  }
  const operation = operationFor(method, url);
  if (operation !== null) standIn.violations.push(...checkRequestBody(operation, body));
  return body;
}

interface Served {
  standIn: GithubStandIn;
  /** `/api/v3` for Enterprise, else ''. */
  prefix: string;
}

/** GraphQL's path: /graphql on github.com, /api/graphql beside Enterprise's /api/v3. */
function graphqlPath(prefix: string): string {
  return prefix === '' ? '/graphql' : `${prefix.replace(/\/v3$/, '')}/graphql`;
}

/** Links point where the client must go next: under the prefix, when there is one. */
function prefixLinks(served: Served, link: string | undefined): string | undefined {
  if (link === undefined || served.prefix === '') return link;
  const origin = new URL(served.standIn.url).origin;
  return link.replaceAll(`<${origin}/`, `<${origin}${served.prefix}/`);
}

async function handle(
  served: Served,
  request: IncomingMessage,
  response: ServerResponse,
  text: string,
) {
  const { standIn, prefix } = served;
  const method = request.method ?? 'GET';
  const raw = new URL(request.url ?? '/', standIn.url);
  const isGraphql = method === 'POST' && raw.pathname === graphqlPath(prefix);
  const underPrefix = prefix === '' || raw.pathname.startsWith(`${prefix}/`);
  // Routing and validation see the path as api.github.com has it.
  const url = new URL(raw);
  if (prefix !== '' && underPrefix) url.pathname = raw.pathname.slice(prefix.length);
  const ifNoneMatch = request.headers['if-none-match'];
  const record: RecordedRequest = {
    method,
    url,
    authorization: request.headers.authorization,
    ifNoneMatch: typeof ifNoneMatch === 'string' ? ifNoneMatch : undefined,
    status: 0,
    body: undefined,
  };
  standIn.requests.push(record);
  standIn.violations.push(...checkHeaders(standIn, request));
  if (isGraphql) {
    record.body = text === '' ? undefined : (JSON.parse(text) as unknown);
  } else if (!underPrefix) {
    standIn.violations.push(`${method} ${raw.pathname}: not under ${prefix}`);
  } else {
    const aliased = new URL(url.toString().replace(/\/repositories\/\d+\//, '/repos/owner/repo/'));
    standIn.violations.push(...checkRequest(method, aliased));
    record.body = parseBody(standIn, method, url, text);
  }
  if ((method === 'POST' || method === 'PATCH') && request.headers['content-type'] === undefined) {
    standIn.violations.push(`${method} ${url.pathname}: no Content-Type`);
  }

  const send = (answer: Answer, check: boolean) => {
    const operation = isGraphql ? null : operationFor(method, url);
    if (check && operation !== null) {
      standIn.violations.push(...checkResponse(operation, answer.status, answer.body));
    }
    const text = JSON.stringify(answer.body);
    const etag = etagOf(text);
    const free = answer.status === 200 && record.ifNoneMatch === etag;
    // A conditional request answered 304 costs nothing (GitHub's documented behaviour).
    if (free) standIn.conditionalHits += 1;
    else standIn.rateLimit.remaining = Math.max(0, standIn.rateLimit.remaining - 1);
    record.status = free ? 304 : answer.status;
    const headers: Record<string, string> = {
      'content-type': 'application/json; charset=utf-8',
      ...rateHeaders(standIn),
      ...(answer.status === 200 ? { etag } : {}),
      ...answer.headers,
    };
    const link = prefixLinks(served, headers.link);
    if (link !== undefined) headers.link = link;
    // No Link on a 304: the client must keep the one that came with the body.
    if (free) delete headers.link;
    response.writeHead(record.status, headers);
    response.end(free ? undefined : text);
  };
  const notFound = () =>
    send({ status: 404, body: { message: 'Not Found', documentation_url: DOCS } }, true);

  const recorded = standIn.replay.shift();
  if (recorded !== undefined) {
    send(recordedAnswer(recorded, new URL(standIn.url).origin), true);
    return;
  }
  const fault = standIn.faults.shift();
  if (fault !== undefined) {
    const answer = faultAnswer(fault, request);
    if (answer !== 'raw') return send(answer, true);
    record.status = -1;
    if (fault.kind === 'hang') return;
    if (fault.kind === 'reset') return request.socket.destroy();
    response.writeHead(200, { 'content-type': 'application/json', ...rateHeaders(standIn) });
    response.end(fault.kind === 'malformed' ? '[{"number": 1, "title": "cut' : '{"message":"ok"}');
    return;
  }
  if (standIn.rateLimit.remaining <= 0) {
    return send(
      {
        status: 403,
        body: { message: 'API rate limit exceeded for user ID 1.', documentation_url: DOCS },
      },
      true,
    );
  }
  if (isGraphql) {
    const answer = await graphqlAnswer(standIn.pullState, record.body);
    standIn.violations.push(...answer.violations);
    return send(answer, false);
  }
  if (!underPrefix) return notFound();
  if (method === 'GET' && url.pathname === '/user')
    return send(userAnswer(standIn.pullState), true);
  const base = `/repos/${standIn.repository}`;
  const lower = url.pathname.toLowerCase();
  if (lower === base.toLowerCase() || lower.startsWith(`${base.toLowerCase()}/`)) {
    const rest = url.pathname.slice(base.length);
    const pulled = await pullRoute(standIn.pullState, method, url, rest, record.body);
    if (pulled !== null) return send(pulled, true);
    const written = writeAnswer(standIn, method, url, rest, record.body);
    if (written !== null) return send(written, true);
  }
  const issuePath = new RegExp(`^/repos/${standIn.repository}/issues(?:/(\\d+))?$`, 'i');
  const match = issuePath.exec(url.pathname);
  if (match === null || method !== 'GET') return notFound();
  const answer =
    match[1] === undefined ? listIssues(standIn, url) : getIssue(standIn, Number(match[1]));
  send(answer, standIn.rewrite === null);
}

export interface GithubStandInOptions {
  token?: string;
  repository?: string;
  issues?: FakeIssue[];
  /** `/api/v3`: serve as GitHub Enterprise Server does. */
  prefix?: string;
  defaultBranch?: string;
  /** Where branches come from (the real git server in the review-loop test); default setBranch. */
  branchHead?: BranchHeadLookup;
}

export async function startGithubStandIn(
  options: GithubStandInOptions = {},
): Promise<GithubStandIn> {
  const prefix = (options.prefix ?? '').replace(/\/+$/, '');
  const server: Server = createServer((request, response) => {
    // Answer once the whole request, a write's JSON body included, has been read.
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      handle({ standIn, prefix }, request, response, Buffer.concat(chunks).toString('utf8')).catch(
        (error: unknown) => {
          standIn.violations.push(`the stand-in failed: ${String(error)}`);
          response.writeHead(500).end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const repository = options.repository ?? 'acme/app';
  const pullState = createPullState(repository, {
    ...(options.defaultBranch === undefined ? {} : { defaultBranch: options.defaultBranch }),
    ...(options.branchHead === undefined ? {} : { branchHead: options.branchHead }),
  });
  const standIn: GithubStandIn = {
    url: `http://127.0.0.1:${port}${prefix}`,
    token: options.token ?? 'ghp_standInToken0123456789abcdefABCDEF',
    repository,
    issues: options.issues ?? [],
    comments: [],
    labels: [],
    commentPageSize: 100,
    addComment: (number, by) => addGithubComment(standIn, number, by),
    requests: [],
    violations: [],
    faults: [],
    pagination: 'normal',
    rateLimit: { limit: 5000, remaining: 5000, resetEpochSeconds: 1_900_000_000 },
    replay: [],
    rewrite: null,
    pullState,
    conditionalHits: 0,
    ...pullDrivers(pullState),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return standIn;
}
