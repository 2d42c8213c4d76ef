// The agent updates its own issue through the controller's MCP gateway: a scripted agent in
// a run Pod calls `tracker_comment` and `tracker_update_state` (the MCP SDK's client over
// Streamable HTTP, with its attempt's token), the gateway writes to the tracker (here a
// local board in a directory), each call is a ToolCalled Event, a restarted controller
// still accepts the token, and a forged token is refused with nothing written. The runner's
// inbox endpoints on the same gateway leave a request on the IssueRun (an annotation).
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INBOX_PATHS, inboxRequestAnnotation, type IssueRun } from '../../src/api/index.js';
import { inboxRequest } from '../support/fakes/objects.js';
import {
  freePort,
  gatewayOptions,
  path,
  until,
  useOperatorEnv,
  type EventView,
} from './operator-harness.js';

/** A tools/call of tracker_comment with this bearer token: the HTTP status it gets. */
let gatewayPort = 0;
async function callWith(token: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${gatewayPort}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'tracker_comment', arguments: { body: 'not the agent' } },
    }),
  });
  await response.text();
  return response.status;
}

/** One inbox call with this token: the status and the JSON answer. */
async function inbox(token: string, method: string, route: string, body?: unknown) {
  const response = await fetch(`http://127.0.0.1:${gatewayPort}${route}`, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

// Far off deadline: the request still waits whenever this runs.
const permissionRequest = inboxRequest({
  options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }],
  deadline: '2099-12-02T11:00:00Z',
});

/** The runner's side of the inbox, while the run runs: a request lands on the IssueRun. */
async function inboxWhileRunning(token: string): Promise<void> {
  expect(await inbox(token, 'POST', INBOX_PATHS.requests, permissionRequest)).toEqual({
    status: 202,
    json: { id: 'a1-s0-1' },
  });
  expect(await inbox(token, 'POST', INBOX_PATHS.requests, permissionRequest)).toMatchObject({
    status: 202,
  });
  expect(await inbox(token, 'GET', `${INBOX_PATHS.request('a1-s0-1')}?wait_ms=200`)).toEqual({
    status: 200,
    json: { decision: null },
  });
  expect(await inbox(token, 'POST', INBOX_PATHS.steers, { slot: 0 })).toEqual({
    status: 200,
    json: { steers: [] },
  });
}

describe('agent tools through the gateway', () => {
  let board: string;
  let port: number;
  const start = () => env.startController(gatewayOptions(port));
  afterAll(async () => {
    await rm(board, { recursive: true, force: true });
  });
  const env = useOperatorEnv(async () => {
    board = await mkdtemp(join(tmpdir(), 'lorenz-board-'));
    await mkdir(board, { recursive: true });
    await writeFile(
      join(board, 'BOARD-1.md'),
      '---\nstatus: Todo\nlabels: [agent]\n---\n# Say done\nComment, then move to review.\n',
    );
    port = await freePort();
    gatewayPort = port;
    return gatewayOptions(port);
  });

  it('comments on and moves its own issue, across a controller restart', async () => {
    await env.createWorkflow('tools', {
      trackerKind: 'local',
      tracker: `  path: ${board}`,
      pollingMs: 1000,
      prompt: [
        'Work on {{ issue.identifier }}.',
        '@tool tracker_comment {"body":"first note from the agent"}',
        '@sleep 6000',
        '@tool tracker_update_state {"state":"In Review"}',
        '@tool tracker_comment {"issue_id":"BOARD-9","body":"not mine"}',
      ].join('\n'),
    });
    const events = async () =>
      (await env.admin.request<{ items: EventView[] }>({ path: path.events })).items.filter(
        (event) => event.reason === 'ToolCalled' && event.regarding.name === 'tools-board-1',
      );
    await until('the first tool call', async () =>
      (await events()).length >= 1 ? true : undefined,
    );
    // The attempt's token, as an attacker who read the Secret would have it.
    const secret = await env.admin.request<{ data: { token: string } }>({
      path: `/api/v1/namespaces/default/secrets/tools-board-1-tools-1`,
    });
    const stolen = Buffer.from(secret.data.token, 'base64').toString('utf8');
    expect(await readFile(join(board, 'BOARD-1.md'), 'utf8')).toContain(
      'agent: first note from the agent',
    );
    await inboxWhileRunning(stolen);
    // The request is on the IssueRun: where the gateway left it, or where an inbox took it.
    const asked = await env.admin.request<IssueRun>({ path: path.issueRuns('tools-board-1') });
    const left = asked.metadata.annotations?.[inboxRequestAnnotation('a1-s0-1')];
    const taken = asked.status?.inbox?.pending?.some((pending) => pending.id === 'a1-s0-1');
    expect(taken === true || JSON.parse(left ?? '{}').title === 'Run the tests').toBe(true);

    // The controller goes away and comes back on the same port: the token still works.
    await env.controller?.stop();
    await start();

    const run: IssueRun = await env.finished('tools-board-1', 120_000);
    const file = await readFile(join(board, 'BOARD-1.md'), 'utf8');
    expect(file).toMatch(/^status: In Review$/m);
    expect(file).not.toContain('not mine');
    // Each call's Event is written after the call is answered, so the last can trail the run.
    const expected = [
      /^tracker_comment on BOARD-1 .*: ok$/,
      /^tracker_update_state on BOARD-1 .*: ok$/,
      /^tracker_comment on .*: failed$/,
    ];
    const notes = await until('an Event for each tool call', async () => {
      const seen = (await events()).map((event) => event.note);
      return expected.every((pattern) => seen.some((note) => pattern.test(note)))
        ? seen
        : undefined;
    });
    expect(notes).toEqual(
      expect.arrayContaining(expected.map((pattern) => expect.stringMatching(pattern))),
    );
    // Once the run has finished its token is revoked; renamed for another run it never worked.
    expect(await callWith(stolen)).toBe(401);
    expect(await callWith(stolen.replace('.tools-board-1.', '.tools-board-2.'))).toBe(401);
    // The agent moved its issue out of the active states: the dispatcher stopped the run.
    expect(run.status?.reason).toBeTruthy();
  });

  it('refuses a forged token with 401 and writes nothing', async () => {
    const before = await readFile(join(board, 'BOARD-1.md'), 'utf8');
    expect(await callWith(`lzt1.default.tools-board-1.1.${'A'.repeat(43)}`)).toBe(401);
    expect(await readFile(join(board, 'BOARD-1.md'), 'utf8')).toBe(before);
  });
});
