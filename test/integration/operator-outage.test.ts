// The controller's way to the apiserver is cut (a TCP proxy between them drops every
// connection) for longer than the lease's renew deadline while a run's Pod works through
// its hooks. The run must finish soon after the way is back, with every hook Event written
// once, and the controller must still be running (it stood down and led again).
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { startTcpRelay, type TcpRelay } from './tcp-relay.js';
import {
  FOUR_HOOKS_SUCCEEDED,
  fourHooks,
  hookRecords,
  path,
  until,
  useOperatorEnv,
} from './operator-harness.js';

const HOOKS = fourHooks({ before_run: 'sleep 2; echo ready', after_run: 'sleep 2; echo after' });

describe('an apiserver outage seen by the controller', () => {
  let proxy: TcpRelay;
  // Declared first, so that it runs after the environment (and its controller) has stopped.
  afterAll(async () => {
    await proxy?.close();
  });
  const env = useOperatorEnv(async (env) => {
    const server = new URL(env.controllerConfig.getCurrentCluster()?.server ?? '');
    proxy = await startTcpRelay(server);
    const viaProxy = new KubeConfig();
    viaProxy.loadFromOptions({
      clusters: env.controllerConfig.clusters.map((cluster) => ({
        ...cluster,
        server: proxy.url,
      })),
      contexts: env.controllerConfig.contexts,
      currentContext: env.controllerConfig.currentContext,
      users: env.controllerConfig.users,
    });
    return { kubeConfig: viaProxy, leaderElect: true, leaderElectionNamespace: 'lorenz-system' };
  });

  it('writes every hook Event once and finishes promptly after the outage, staying up', async () => {
    await env.createWorkflow('cut', { hooks: HOOKS, prompt: '@sleep 3000\n@write done.txt ok' });
    await until('the controller to lead', async () =>
      env.controller?.manager.isLeader() ? true : undefined,
    );
    await env.createIssueRun('cut-1', 'cut', { identifier: 'C-1', title: 'Through an outage' });
    await until('after_create to be recorded', async () => {
      const events = await env.hookEvents('cut-1');
      return events.some((event) => event.note.startsWith('after_create')) ? true : undefined;
    });

    proxy.cut(true);
    // Longer than the renew deadline (7 s): this replica stands down meanwhile. The Pod
    // (run by the node, which still reaches the apiserver) finishes its hooks in the dark.
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    expect(env.controller?.manager.isLeader()).toBe(false);
    proxy.restore();
    const restored = Date.now();

    const run = await env.finished('cut-1', 60_000);
    const lateBy = Date.now() - restored;
    expect(run.status?.phase, JSON.stringify(run.status?.conditions)).toBe('Succeeded');
    // Watches back within 4 s (+ jitter), the Lease retried every 1.5 s: measured ≈ 4 s.
    // A 30 s watch backoff cap made this 16 s and more.
    expect(lateBy).toBeLessThan(12_000);
    await until('the Events of every hook', async () => {
      const events = await env.hookEvents('cut-1');
      return events.length >= 8 ? events : undefined;
    });
    const events = await env.hookEvents('cut-1');
    expect(hookRecords(events)).toEqual(FOUR_HOOKS_SUCCEEDED);
    expect(new Set(events.map((event) => event.metadata.name)).size).toBe(8);
    // The process did not exit: the manager leads again.
    await until('the controller to lead again', async () =>
      env.controller?.manager.isLeader() ? true : undefined,
    );
    const state = await Promise.race([
      env.controller?.done.then(() => 'exited'),
      new Promise((resolve) => setTimeout(() => resolve('running'), 100)),
    ]);
    expect(state).toBe('running');
  });
});

// The controller is away while a run Pod ends, and the node loses the Pod's log meanwhile
// (a log rotated away, a node disk wiped). The apiserver answers every read of it with an
// error. The hook Events not written before must come from the termination message: each
// written once, none twice, and the run must finish.
describe('a run Pod whose log is lost while the controller is away', () => {
  const env = useOperatorEnv();

  it('rebuilds the missing hook Events from the termination message, each once', async () => {
    await env.createWorkflow('lost', {
      hooks: { ...HOOKS, before_run: 'sleep 3; echo ready' },
      prompt: '@write done.txt ok',
    });
    await env.createIssueRun('lost-1', 'lost', { identifier: 'L-1', title: 'Log lost' });
    await until('after_create to be recorded', async () => {
      const events = await env.hookEvents('lost-1');
      return events.some((event) => event.reason === 'HookSucceeded') ? true : undefined;
    });
    await env.controller?.stop();
    // Counted once the controller is stopped: until then its log follower may still be
    // writing the next hook's Event from the log.
    const before = (await env.hookEvents('lost-1')).length;

    const podName = (await env.getRun('lost-1')).status?.podName ?? '';
    const pod = await until('the run Pod to end', async () => {
      const found = await env.admin.request<{
        metadata: { uid: string };
        status?: { phase?: string };
      }>({ path: `${path.pods}/${podName}` });
      return found.status?.phase === 'Succeeded' ? found : undefined;
    });
    await rm(join(env.node.dataDir, 'pods', pod.metadata.uid, 'logs', 'agent'), {
      recursive: true,
      force: true,
    });

    await env.startController({ logLostAfterMs: 2000 });
    const run = await env.finished('lost-1', 60_000);
    expect(run.status?.phase, JSON.stringify(run.status?.conditions)).toBe('Succeeded');
    const events = await until('the Events of every hook', async () => {
      const found = await env.hookEvents('lost-1');
      return found.length >= 8 ? found : undefined;
    });
    expect(hookRecords(events)).toEqual(FOUR_HOOKS_SUCCEEDED);
    expect(new Set(events.map((event) => event.metadata.name)).size).toBe(8);
    // Those written from the log keep their output; the rest say where they came from.
    expect(before).toBeGreaterThanOrEqual(2);
    expect(before).toBeLessThan(8);
    expect(events.slice(0, before).every((event) => !event.note.includes('termination'))).toBe(
      true,
    );
    expect(events.slice(before).every((event) => event.note.includes('termination message'))).toBe(
      true,
    );
    expect(run.status?.hooks?.map((hook) => `${hook.name}:${hook.status}`)).toEqual([
      'after_create:completed',
      'before_run:completed',
      'after_run:completed',
      'before_remove:completed',
    ]);
  });
});
