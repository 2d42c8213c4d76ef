// `lorenz controller` as users and the kubelet run it: the built bin (dist/cli/lorenz) as a
// child process against a real kube-apiserver, with the agent-tools gateway on, and a
// signal sent to it. Issue 25: it logged "manager stopped" and stayed up, the gateway's
// server keeping the process alive, so `make demo` and every rollout waited for SIGKILL.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../hack/cluster/control-plane.js';
import { createKubeClient, type KubeClient } from '../../src/controller/runtime/client.js';
import { LEASES, resourcePath } from '../../src/controller/runtime/client.js';
import { startTcpRelay } from './tcp-relay.js';
import {
  NAMESPACE,
  controllerKubeConfig,
  freePort,
  installOperator,
  root,
} from './operator-harness.js';

/** Where the chart keeps the Lease (config/rbac's leader-election Role is there). */
const LEASE_NAMESPACE = 'lorenz-system';
const LEASE_PATH = resourcePath(LEASES, LEASE_NAMESPACE, 'lorenz-controller');
/** What the kubelet's grace period must never be reached for: nothing in flight. */
const EXIT_WITHIN_MS = 5_000;

let cp: ControlPlane;
let admin: KubeClient;
let dir: string;
const children = new Set<ChildProcess>();

/** The controller's ServiceAccount (config/rbac's verbs) through `server`, as a file. */
async function kubeconfigFile(server: string, name: string): Promise<string> {
  const config = controllerKubeConfig(cp);
  config.loadFromOptions({
    clusters: config.clusters.map((cluster) => ({ ...cluster, server })),
    users: config.users,
    contexts: config.contexts,
    currentContext: config.currentContext,
  });
  const path = join(dir, `${name}.kubeconfig`);
  await writeFile(path, config.exportConfig());
  return path;
}

interface Replica {
  child: ChildProcess;
  toolsPort: number;
  /** Everything it printed (JSON log lines). */
  output(): string;
  /** Settles with the exit code (or 128 + signal number), and when. */
  exited: Promise<{ code: number; at: number }>;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGINT: 2, SIGTERM: 15, SIGKILL: 9 };

async function startReplica(kubeconfig: string): Promise<Replica> {
  const toolsPort = await freePort();
  // The launcher (dist/cli/lorenz) execs node on the plain bundle for `controller`: the
  // signal reaches the controller's own process, as in the image.
  const child = spawn(
    join(root, 'dist/cli/lorenz'),
    [
      'controller',
      '--kubeconfig',
      kubeconfig,
      '--namespace',
      NAMESPACE,
      '--leader-elect',
      '--leader-election-namespace',
      LEASE_NAMESPACE,
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--health-probe-bind-address',
      '127.0.0.1:0',
      '--tools-bind-address',
      `127.0.0.1:${toolsPort}`,
      '--tools-url',
      `http://127.0.0.1:${toolsPort}/mcp`,
    ],
    { env: { ...process.env, LORENZ_NODE: process.execPath }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number; at: number }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({
        code: code ?? 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 0) : 0),
        at: Date.now(),
      });
    }),
  );
  return { child, toolsPort, output: () => output, exited };
}

interface Lease {
  spec?: { holderIdentity?: string | null; leaseDurationSeconds?: number };
}

async function leaseHolder(): Promise<string> {
  try {
    const lease = await admin.request<Lease>({ path: LEASE_PATH });
    return lease.spec?.holderIdentity ?? '';
  } catch {
    return '';
  }
}

async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  replica?: Replica,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${replica ? `:\n${replica.output()}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The gateway answers: an unauthenticated tool call is refused with 401. */
async function gatewayStatus(port: number): Promise<number | undefined> {
  const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  await response.body?.cancel();
  return response.status;
}

/** Started, holding the Lease (the first replica) or not, its gateway answering. */
async function readyReplica(kubeconfig: string, leads: boolean): Promise<Replica> {
  const before = await leaseHolder();
  const replica = await startReplica(kubeconfig);
  await waitUntil('the gateway', () => gatewayStatus(replica.toolsPort), 60_000, replica);
  if (leads) {
    // Its own term (an earlier replica killed without releasing may hold the Lease a while).
    await waitUntil(
      'the lease',
      async () => (replica.output().includes('"msg":"became leader"') ? true : undefined),
      60_000,
      replica,
    );
  } else {
    // A candidate: it has tried at least once (it logs nothing until it leads).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await leaseHolder()).toBe(before);
  }
  return replica;
}

const logLines = (replica: Replica): Array<Record<string, unknown>> =>
  replica
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

beforeAll(async () => {
  // The bin users run: built from this checkout (the unit tier's global setup does the same).
  execFileSync(process.execPath, ['hack/bundle.mjs'], { cwd: root, stdio: 'inherit' });
  cp = await startControlPlane({ controllers: [] });
  await installOperator(cp);
  admin = createKubeClient(cp.kubeConfig);
  dir = await mkdtemp(join(tmpdir(), 'lorenz-shutdown-it-'));
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  admin?.close();
  await cp?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('lorenz controller on a signal', () => {
  const cases = [
    { signal: 'SIGTERM' as const, successor: false },
    { signal: 'SIGINT' as const, successor: true },
  ];
  it.each(cases)(
    'exits 0 within 5 s on $signal with the gateway on and releases its Lease (successor: $successor)',
    async ({ signal, successor }) => {
      const kubeconfig = await kubeconfigFile(cp.server, 'direct');
      const leader = await readyReplica(kubeconfig, true);
      const identity = await leaseHolder();
      const next = successor ? await readyReplica(kubeconfig, false) : undefined;

      const sent = Date.now();
      leader.child.kill(signal);
      const { code, at } = await Promise.race([
        leader.exited,
        new Promise<{ code: number; at: number }>((resolve) =>
          setTimeout(() => resolve({ code: -1, at: Date.now() }), 20_000),
        ),
      ]);
      const output = leader.output();
      expect(code, output).toBe(0);
      expect(at - sent, output).toBeLessThan(EXIT_WITHIN_MS);
      // Stopped in order, not cut short by the safety net.
      expect(output).toContain('lease released');
      expect(output).not.toContain('still open after the shutdown');
      await expect(gatewayStatus(leader.toolsPort)).rejects.toThrow();

      if (!next) {
        expect(await leaseHolder()).toBe('');
        return;
      }
      // Released, the lease is free: the candidate takes it within a retry period or two,
      // not after the lease duration (10 s) a crashed leader would leave it held for.
      const holder = await waitUntil(
        'the successor',
        async () => {
          const now = await leaseHolder();
          return now !== '' && now !== identity ? now : undefined;
        },
        5_000,
        next,
      );
      expect(Date.now() - at).toBeLessThan(5_000);
      expect(holder).not.toBe(identity);
      next.child.kill('SIGTERM');
      expect((await next.exited).code, next.output()).toBe(0);
      expect(await leaseHolder()).toBe('');
    },
  );

  it('with the apiserver hanging: says what it waits for, a second signal exits at once', async () => {
    const relay = await startTcpRelay(new URL(cp.server));
    try {
      const replica = await readyReplica(await kubeconfigFile(relay.url, 'relay'), true);
      relay.freeze(true);
      replica.child.kill('SIGTERM');
      // The Lease cannot be released: it waits (bounded) for the apiserver.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(replica.child.exitCode, replica.output()).toBeNull();
      const waiting = logLines(replica).find((line) => line.msg === 'shutting down');
      expect(waiting, replica.output()).toMatchObject({ signal: 'SIGTERM' });
      expect(String(waiting?.waitsFor)).toMatch(/reconciles/);
      const sent = Date.now();
      replica.child.kill('SIGTERM');
      const { code, at } = await replica.exited;
      expect(at - sent, replica.output()).toBeLessThan(1_000);
      expect(code).toBe(128 + 15);
      expect(replica.output()).toContain('second signal');
    } finally {
      await relay.close();
    }
  });

  it('with the apiserver hanging and one signal: still exits within its bound', async () => {
    const relay = await startTcpRelay(new URL(cp.server));
    try {
      const replica = await readyReplica(await kubeconfigFile(relay.url, 'relay-bound'), true);
      relay.freeze(true);
      const sent = Date.now();
      replica.child.kill('SIGTERM');
      const { code, at } = await replica.exited;
      // The Lease's release gives up after the renew deadline (7 s); the chart's
      // terminationGracePeriodSeconds is 30.
      expect(at - sent, replica.output()).toBeLessThan(12_000);
      expect(code, replica.output()).toBe(0);
      expect(replica.output()).toContain('lease release failed');
    } finally {
      await relay.close();
    }
  });
});
