// The tools gateway's test harness: a real HTTP server on a free port, the MCP SDK's own
// client with the token in its Authorization header, a fake tracker writer that notes every
// write, and a recorder that notes every call. Call useToolsHarness() in a test file to get
// the servers and clients stopped after each test.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach } from 'vitest';
import {
  createToolsGateway,
  mintToken,
  startToolsServer,
  tokenSha256,
  type ResolvedRun,
  type ToolCallRecord,
  type ToolsGatewayOptions,
  type ToolsLimits,
} from '../../../src/tools/index.js';
import type { NewIssue, TrackerComment, TrackerWriter } from '../../../src/tracker/types.js';
import type { Issue } from '../../../src/workflow/issue.js';

export const KEY = 'lin_api_SECRETKEY0123456789';

export function issue(id: string, identifier: string, state = 'In Progress'): Issue {
  return {
    id,
    identifier,
    title: `Title of ${identifier}`,
    description: null,
    priority: null,
    state,
    state_type: null,
    branch_name: null,
    url: null,
    assignee_id: null,
    blocked_by: [],
    labels: [],
    assigned_to_worker: true,
    created_at: null,
    updated_at: null,
  };
}

/** A tracker in memory that notes every write, and can be told to fail the next call. */
export class FakeWriter implements TrackerWriter {
  writes: string[] = [];
  failWith: Error | null = null;
  comments: TrackerComment[] = [
    { id: 'c1', body: 'first', author: 'bot', created_at: null, updated_at: null },
  ];
  issue = issue('uuid-42', 'ENG-42');

  private check(): void {
    const failure = this.failWith;
    if (failure) throw failure;
  }
  readIssue(id: string) {
    this.check();
    return Promise.resolve(id === this.issue.id ? this.issue : null);
  }
  listComments() {
    this.check();
    return Promise.resolve(this.comments);
  }
  comment(id: string, body: string) {
    this.check();
    this.writes.push(`comment ${id} ${body}`);
    const made = { id: 'c2', body, author: 'bot', created_at: null, updated_at: null };
    this.comments.push(made);
    return Promise.resolve(made);
  }
  updateComment(id: string, commentId: string, body: string) {
    this.check();
    this.writes.push(`updateComment ${id} ${commentId} ${body}`);
    return Promise.resolve({
      id: commentId,
      body,
      author: 'bot',
      created_at: null,
      updated_at: null,
    });
  }
  updateState(id: string, state: string) {
    this.check();
    this.writes.push(`updateState ${id} ${state}`);
    this.issue = { ...this.issue, state };
    return Promise.resolve(this.issue);
  }
  graphql(query: string, variables: Record<string, unknown>) {
    this.writes.push(`graphql ${query} ${JSON.stringify(variables)}`);
    return Promise.resolve({ viewer: { id: 'user-me' } });
  }

  createIssue(input: NewIssue) {
    this.check();
    this.writes.push(`createIssue ${input.title} ${input.state ?? '-'}`);
    return Promise.resolve(issue('uuid-43', 'ENG-43', input.state ?? 'Todo'));
  }
}

export interface Harness {
  url: URL;
  writer: FakeWriter;
  records: ToolCallRecord[];
  runs: Map<string, ResolvedRun>;
  resolveCalls: number;
  clock: { now: number };
  token: string;
  revoke(namespace: string, run: string): void;
  /** The gateway's endWaits (what a stopping server does to long polls first). */
  endWaits(): void;
}

const stops: (() => Promise<void>)[] = [];

/** Stops what the tests of the calling file started, after each test. */
export function useToolsHarness(): void {
  afterEach(async () => {
    await Promise.all(stops.splice(0).map((stop) => stop()));
  });
}

export function resolvedFor(token: string, extra: Partial<ResolvedRun> = {}): ResolvedRun {
  return {
    uid: 'uid-1',
    tokenHash: tokenSha256(token),
    issueId: 'uuid-42',
    issueIdentifier: 'ENG-42',
    trackerKind: 'linear',
    workflow: { tracker: { activeStates: ['Todo', 'In Progress'], terminalStates: ['Done'] } },
    allowedStates: null,
    createIssue: false,
    linearGraphql: false,
    revoked: false,
    ...extra,
  };
}

export async function start(
  run: Partial<ResolvedRun> = {},
  limits: ToolsLimits = {},
  more: Partial<ToolsGatewayOptions> = {},
): Promise<Harness> {
  const token = mintToken({ namespace: 'team-a', run: 'app-eng-42', attempt: 1 });
  const h = {
    writer: new FakeWriter(),
    records: [],
    runs: new Map([['team-a/app-eng-42/1', resolvedFor(token, run)]]),
    resolveCalls: 0,
    clock: { now: 1_000_000 },
    token,
  } as unknown as Harness;
  const gateway = createToolsGateway({
    resolveRun: (namespace, name, attempt) => {
      h.resolveCalls += 1;
      return h.runs.get(`${namespace}/${name}/${attempt}`) ?? null;
    },
    trackerFor: () => h.writer,
    recorder: { toolCalled: (record) => h.records.push(record) },
    limits,
    now: () => h.clock.now,
    ...more,
  });
  const server = await startToolsServer({ bindAddress: '127.0.0.1:0', gateway });
  stops.push(() => server.stop());
  h.url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  h.revoke = (namespace, name) => gateway.revoke(namespace, name);
  h.endWaits = () => gateway.endWaits();
  return h;
}

export async function connect(h: Harness, token = h.token): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(h.url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'test-agent', version: '1' });
  await client.connect(transport);
  stops.push(() => client.close());
  return client;
}

export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const first = result.content[0];
  return { isError: result.isError === true, text: first?.type === 'text' ? first.text : '' };
}

export async function post(
  h: Harness,
  authorization: string | null,
): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (authorization !== null) headers.authorization = authorization;
  const response = await fetch(h.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'tracker_comment', arguments: { body: 'x' } },
    }),
  });
  return { status: response.status, body: await response.text() };
}
