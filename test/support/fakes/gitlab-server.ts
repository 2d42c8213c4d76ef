// A local GitLab REST v4 stand-in for the GitLab code host: the endpoints of
// gitlab-routes.ts over real HTTP, under an API root that may sit below a relative URL root
// (self-hosted `https://host/gitlab/api/v4`). It asks for the token in PRIVATE-TOKEN, gives
// ETags and answers If-None-Match with 304 (counted), paginates lists as GitLab does
// (x-next-page, x-total, Link), and checks every JSON answer it builds against the shapes
// GitLab documents (gitlab-shapes.ts); problems land in `violations`, which tests expect to
// stay empty. Faults are queued per request.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeUser } from './gitlab-data.js';
import { type Answer, type RouteContext, matchRoute } from './gitlab-routes.js';
import { checkAnswer } from './gitlab-shapes.js';
import { type BranchHeads, GitlabState } from './gitlab-state.js';

/** A fault for the next request, or for the next whose path ends with `path`. */
export type GitlabFault = { path?: string } & (
  | { kind: 'status'; status: number; message: string }
  /** 429 with Retry-After seconds, or only RateLimit-Reset (epoch seconds). */
  | { kind: 'rate-limit'; retryAfterSeconds?: number; resetEpochSeconds?: number }
  /** 200 with a truncated JSON body. */
  | { kind: 'malformed' }
  /** 200 with a body that is JSON but not the documented shape. */
  | { kind: 'wrong-shape'; body: unknown }
  /** A 500 whose message quotes the request's PRIVATE-TOKEN back. */
  | { kind: 'echo-token' }
  /** The connection is cut before any answer. */
  | { kind: 'reset' }
  /** Never answers: the client's timeout (or its caller's signal) must end the request. */
  | { kind: 'hang' }
);

/** How pages link: as GitLab does, only x-next-page (no Link), forever, or off-site. */
export type GitlabPagination = 'normal' | 'next-page-only' | 'endless' | 'foreign-next';

export interface GitlabRecordedRequest {
  method: string;
  /** The path as sent, percent-encoding kept (`/api/v4/projects/g%2Fp`). */
  rawPath: string;
  query: URLSearchParams;
  privateToken: string | undefined;
  authorization: string | undefined;
  ifNoneMatch: string | undefined;
  status: number;
  body: unknown;
}

export interface GitlabStandInOptions {
  project?: string;
  token?: string;
  username?: string;
  /** The API root's path; default `/api/v4`. */
  apiPath?: string;
  /** Branch heads; default the state's own `branches` (setBranch). */
  branchHead?: BranchHeads;
}

export interface GitlabStandIn {
  /** The API root, e.g. http://127.0.0.1:PORT/api/v4 */
  apiUrl: string;
  token: string;
  project: string;
  projectId: number;
  username: string;
  state: GitlabState;
  defaultBranch: string | null;
  requests: GitlabRecordedRequest[];
  /** How many GETs were answered 304 Not Modified. */
  notModified: number;
  violations: string[];
  faults: GitlabFault[];
  pagination: GitlabPagination;
  /** Items per page at most, whatever per_page asks (GitLab's cap is 100). */
  maxPerPage: number;
  reviewersEndpoint: boolean;
  shutdown(): Promise<void>;
}

export const etagOf = (text: string): string =>
  `W/"${createHash('sha256').update(text).digest('hex').slice(0, 32)}"`;

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return null;
  }
}

function pageHeaders(
  standIn: GitlabStandIn,
  url: URL,
  total: number,
  page: number,
  perPage: number,
) {
  const pages = Math.max(1, Math.ceil(total / perPage));
  const endless = standIn.pagination === 'endless';
  const next = endless || page < pages ? page + 1 : null;
  const headers: Record<string, string> = {
    'x-page': String(page),
    'x-per-page': String(perPage),
    'x-next-page': next === null ? '' : String(next),
    'x-prev-page': page > 1 ? String(page - 1) : '',
    'x-total': String(total),
    'x-total-pages': String(pages),
  };
  if (standIn.pagination !== 'next-page-only') {
    const at = (n: number) => {
      const link = new URL(url);
      link.searchParams.set('page', String(n));
      return link.toString();
    };
    const links = [`<${at(1)}>; rel="first"`, `<${at(pages)}>; rel="last"`];
    if (standIn.pagination === 'foreign-next') {
      links.unshift(`<https://elsewhere.example/api/v4/next?page=${page + 1}>; rel="next"`);
    } else if (next !== null) links.unshift(`<${at(next)}>; rel="next"`);
    if (page > 1) links.unshift(`<${at(page - 1)}>; rel="prev"`);
    headers.link = links.join(', ');
  }
  return headers;
}

function faultAnswer(
  fault: GitlabFault,
  request: IncomingMessage,
): Answer & { headers?: Record<string, string> } {
  switch (fault.kind) {
    case 'status':
      return { status: fault.status, body: { message: fault.message } };
    case 'rate-limit': {
      const headers: Record<string, string> = { 'ratelimit-remaining': '0' };
      if (fault.retryAfterSeconds !== undefined)
        headers['retry-after'] = String(fault.retryAfterSeconds);
      if (fault.resetEpochSeconds !== undefined)
        headers['ratelimit-reset'] = String(fault.resetEpochSeconds);
      return { status: 429, body: { message: 'Retry later' }, headers };
    }
    case 'wrong-shape':
      return { status: 200, body: fault.body };
    case 'echo-token':
      return {
        status: 500,
        body: { message: `token ${String(request.headers['private-token'])} refused` },
      };
    case 'malformed':
    case 'reset':
    case 'hang':
      return { status: 200, body: null };
  }
}

export async function startGitlabServer(
  options: GitlabStandInOptions = {},
): Promise<GitlabStandIn> {
  const apiPath = (options.apiPath ?? '/api/v4').replace(/\/+$/, '');
  const state = new GitlabState();
  const server = createServer();
  const standIn: GitlabStandIn = {
    apiUrl: '',
    token: options.token ?? 'glpat-stand-in-token',
    project: options.project ?? 'acme/app',
    projectId: 42,
    username: options.username ?? 'lorenz-bot',
    state,
    defaultBranch: 'main',
    requests: [],
    notModified: 0,
    violations: [],
    faults: [],
    pagination: 'normal',
    maxPerPage: 100,
    reviewersEndpoint: true,
    shutdown: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // fetch keeps connections alive; close would wait for them to time out.
        server.closeAllConnections();
      }),
  };
  const user: FakeUser = { id: 7, username: standIn.username };
  const context = (webBase: string): RouteContext => ({
    state,
    project: standIn.project,
    projectId: standIn.projectId,
    user,
    webBase,
    defaultBranch: () => standIn.defaultBranch,
    branchHead:
      options.branchHead ?? (async (_project, branch) => state.branches.get(branch) ?? null),
    reviewersEndpoint: () => standIn.reviewersEndpoint,
  });

  async function respond(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', standIn.apiUrl);
    const method = request.method ?? 'GET';
    const body = await readBody(request);
    const token = request.headers['private-token'];
    const record: GitlabRecordedRequest = {
      method,
      rawPath: url.pathname,
      query: url.searchParams,
      privateToken: typeof token === 'string' ? token : undefined,
      authorization: request.headers.authorization,
      ifNoneMatch: request.headers['if-none-match'],
      status: 0,
      body,
    };
    standIn.requests.push(record);
    const send = (status: number, text: string, headers: Record<string, string>) => {
      record.status = status;
      response.writeHead(status, headers);
      response.end(text);
    };
    const json = { 'content-type': 'application/json' };
    if (!url.pathname.startsWith(`${apiPath}/`))
      return send(404, '{"error":"404 Not Found"}', json);
    if (record.privateToken !== standIn.token) {
      return send(401, '{"message":"401 Unauthorized"}', json);
    }
    const at = standIn.faults.findIndex(
      (item) => item.path === undefined || url.pathname.endsWith(item.path),
    );
    const fault = at === -1 ? undefined : standIn.faults.splice(at, 1)[0];
    if (fault?.kind === 'reset') {
      request.socket.destroy();
      return;
    }
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'malformed') return send(200, '[{"id": 1, "na', json);
    if (fault !== undefined) {
      const answer = faultAnswer(fault, request);
      return send(answer.status, JSON.stringify(answer.body), { ...json, ...answer.headers });
    }
    const segments = url.pathname
      .slice(apiPath.length + 1)
      .split('/')
      .map(decodeURIComponent);
    const webBase = standIn.apiUrl.slice(0, -apiPath.length);
    const matched = matchRoute(context(webBase), method, segments);
    if (matched === null) return send(404, '{"error":"404 Not Found"}', json);
    if (matched === 'no-project') return send(404, '{"message":"404 Project Not Found"}', json);
    const answer = await matched.route.handler(context(webBase), matched.params, {
      method,
      segments,
      query: url.searchParams,
      body,
    });
    let payload = answer.body;
    const headers: Record<string, string> =
      answer.text === true ? { 'content-type': 'text/plain' } : { ...json };
    if (answer.list === true && Array.isArray(payload)) {
      const perPage = Math.min(standIn.maxPerPage, Number(url.searchParams.get('per_page') ?? 20));
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1));
      Object.assign(headers, pageHeaders(standIn, url, payload.length, page, perPage));
      payload = payload.slice((page - 1) * perPage, page * perPage);
    }
    if (answer.text !== true) {
      for (const problem of checkAnswer(method, matched.route.template, answer.status, payload)) {
        standIn.violations.push(`${method} ${matched.route.template} ${answer.status}: ${problem}`);
      }
    }
    const text = answer.text === true ? String(payload) : JSON.stringify(payload);
    if (method === 'GET' && answer.status === 200) {
      const etag = etagOf(text);
      headers.etag = etag;
      if (record.ifNoneMatch === etag) {
        standIn.notModified += 1;
        return send(304, '', { etag });
      }
    }
    return send(answer.status, text, headers);
  }

  server.on('request', (request, response) => {
    respond(request, response).catch((error: unknown) => {
      standIn.violations.push(`the stand-in failed: ${String(error)}`);
      response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  standIn.apiUrl = `http://127.0.0.1:${port}${apiPath}`;
  return standIn;
}
