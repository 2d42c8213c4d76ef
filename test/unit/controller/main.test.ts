// `lorenz controller` as a process, its apiserver unreachable (connection refused): what is
// left to hold the process is the controller's own listeners, the agent-tools gateway first
// (issue 25: it kept the process up after "manager stopped"). The Lease's release is the
// integration tier's (test/integration/controller-shutdown.test.ts, a real apiserver).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../..');
const dir = mkdtempSync(join(tmpdir(), 'lorenz-controller-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  [
    'apiVersion: v1',
    'kind: Config',
    // Port 1 on loopback: refused at once.
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
    'users: [{name: u, user: {token: t}}]',
    'contexts: [{name: c, context: {cluster: c, user: u}}]',
    'current-context: c',
    '',
  ].join('\n'),
);

async function listening(): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
const portOf = (server: net.Server) => (server.address() as net.AddressInfo).port;

async function freePort(): Promise<number> {
  const server = await listening();
  const port = portOf(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function startController(args: { tools: number; metrics: string }) {
  const child = spawn(
    join(root, 'dist/cli/lorenz'),
    [
      'controller',
      '--kubeconfig',
      kubeconfig,
      '--metrics-bind-address',
      args.metrics,
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--tools-bind-address',
      `127.0.0.1:${args.tools}`,
      '--tools-url',
      `http://127.0.0.1:${args.tools}/mcp`,
    ],
    { env: { ...process.env, LORENZ_NODE: process.execPath }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  /** The exit code, or 'running' when it is still up after `ms` (then it is killed). */
  const exitWithin = async (ms: number): Promise<number | null | 'running'> => {
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      exited,
      new Promise<'running'>((resolve) => (timer = setTimeout(() => resolve('running'), ms))),
    ]);
    clearTimeout(timer);
    if (result === 'running') child.kill('SIGKILL');
    return result;
  };
  return { child, output: () => output, exitWithin };
}

async function gatewayAnswers(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', body: '{}' });
    await response.body?.cancel();
    return response.status === 401;
  } catch {
    return false;
  }
}

describe('lorenz controller with the gateway on', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'exits 0 within 5 s of %s, its gateway closed, though a client kept a connection open',
    async (signal) => {
      const tools = await freePort();
      const controller = startController({ tools, metrics: '127.0.0.1:0' });
      const deadline = Date.now() + 20_000;
      while (!(await gatewayAnswers(tools))) {
        if (Date.now() > deadline) throw new Error(`no gateway:\n${controller.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // An agent between two tool calls: a keep-alive connection, idle.
      const idle = net.connect(tools, '127.0.0.1');
      await new Promise<void>((resolve) => idle.once('connect', () => resolve()));
      idle.on('error', () => undefined);
      controller.child.kill(signal);
      expect(await controller.exitWithin(5_000), controller.output()).toBe(0);
      expect(controller.output()).toContain('"msg":"shutting down"');
      expect(controller.output()).not.toContain('still open after the shutdown');
      expect(await gatewayAnswers(tools)).toBe(false);
      idle.destroy();
    },
  );

  it('exits 1 when it cannot start (its metrics port taken), not held up by the gateway', async () => {
    const taken = await listening();
    try {
      const controller = startController({
        tools: await freePort(),
        metrics: `127.0.0.1:${portOf(taken)}`,
      });
      expect(await controller.exitWithin(10_000), controller.output()).toBe(1);
      expect(controller.output()).toContain('EADDRINUSE');
    } finally {
      taken.close();
    }
  });
});
