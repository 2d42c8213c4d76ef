// The runner offers the agent-tools gateway to the agent in ACP session/new, with the token
// read from its file: the scripted agent (the bundle the operator image ships, built the same
// way) calls a tool over the MCP SDK's client, and the token never reaches an environment
// or anything reported.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseRunnerArgs } from '../../../src/runner/main.js';
import { buildScriptedAgent } from '../../fixtures/scripted-agent/build.js';
import { runInPod, writeRunInputs } from './run-inputs.js';

const TOKEN = `lzt1.ns.eng-7.1.${'A'.repeat(43)}`;

let dir: string;
let agentBundle: string;
let server: Server;
let url: string;
/** Authorization headers the gateway stand-in saw. */
const seen: string[] = [];

/** A stand-in gateway: one `echo` tool, stateless (a server and transport per request). */
async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  seen.push(req.headers.authorization ?? '');
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
    return;
  }
  const mcp = new McpServer({ name: 'stand-in', version: '1.0.0' });
  mcp.registerTool(
    'echo',
    { description: 'Echoes its text', inputSchema: { text: z.string() } },
    ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
  );
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => void transport.close().then(() => mcp.close()));
  await mcp.connect(transport);
  await transport.handleRequest(req, res);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lorenz-runner-tools-'));
  agentBundle = await buildScriptedAgent();
  server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}, 60_000);
afterAll(async () => {
  await new Promise((done) => server.close(done));
  await rm(dir, { recursive: true, force: true });
});

const writeInputs = (text: string) => writeRunInputs(join(dir, 'inputs'), text, { title: 'Tools' });

const workflowWith = (prompt: string) => `---
agent: { kind: scripted, max_turns: 1 }
agents:
  scripted: { bridge_command: ${JSON.stringify(`${process.execPath} ${agentBundle}`)} }
hooks:
  before_run: env > "$OUT/hook-env.txt"; cat "$TOKEN_FILE"
---
${prompt}`;

async function runWithTools(prompt: string, tools: { url: string; tokenFile: string }) {
  const inputsDir = await writeInputs(workflowWith(prompt));
  const { code, lines, events } = await runInPod(dir, {
    inputsDir,
    noAgent: false,
    tools: { ...tools, serverName: 'lorenz_memory' },
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      OUT: dir,
      TOKEN_FILE: tools.tokenFile,
    },
  });
  return { code, events, text: lines.join('') };
}

describe('runner: agent tools', () => {
  it('takes the tools flags together', () => {
    const parsed = parseRunnerArgs([
      '--tools-url',
      'http://gw/mcp',
      '--tools-token-file',
      '/lorenz/tools/token',
      '--tools-server-name',
      'lorenz_linear',
    ]);
    expect(parsed.tools).toEqual({
      url: 'http://gw/mcp',
      tokenFile: '/lorenz/tools/token',
      serverName: 'lorenz_linear',
    });
    expect(parseRunnerArgs([]).tools).toBeUndefined();
    expect(() => parseRunnerArgs(['--tools-url', 'http://gw/mcp'])).toThrow(/go together/);
  });

  it('offers the gateway in session/new: @tool echo reaches it with the bearer token', async () => {
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, `${TOKEN}\n`);
    const prompt = '@tool echo {"text":"hi"}\n@shell env > "$OUT/agent-env.txt"';
    const { code, events, text } = await runWithTools(prompt, { url, tokenFile });
    expect(code).toBe(0);
    expect(seen).toContain(`Bearer ${TOKEN}`);
    expect(text).toContain('echo: hi');
    const started = events.find((event) => event.type === 'session_started');
    expect(started?.message).toMatchObject({ mcpServers: ['lorenz_memory'] });
    // Not in anything reported (the hook printed the file: redacted), nor in an environment.
    expect(text).not.toContain(TOKEN);
    expect(text).toContain('[redacted]');
    for (const file of ['hook-env.txt', 'agent-env.txt']) {
      const env = await readFile(join(dir, file), 'utf8');
      expect(env).toContain('PATH=');
      expect(env, file).not.toContain(TOKEN);
    }
  }, 60_000);

  it('says so when the gateway refuses the token, and the turn goes on', async () => {
    const tokenFile = join(dir, 'forged');
    await writeFile(tokenFile, `lzt1.ns.eng-7.1.${'B'.repeat(43)}`);
    const { code, text } = await runWithTools('@tool echo {"text":"hi"}', { url, tokenFile });
    expect(code).toBe(0);
    expect(text).toMatch(/tool echo failed: [^\n]*unauthorized/);
    expect(text).not.toContain('echo: hi');
  }, 60_000);

  it('fails the slot when the token file cannot be read', async () => {
    const { code, text } = await runWithTools('@tool echo {}', {
      url,
      tokenFile: join(dir, 'missing'),
    });
    expect(code).toBe(1);
    expect(text).toContain('cannot read the tools token');
  }, 60_000);
});
