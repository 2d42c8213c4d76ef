import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startControlPlane, type ControlPlane } from '../../hack/cluster/control-plane.js';
import {
  CONFIGMAPS,
  createInformer,
  createKubeClient,
  createManager,
  objectKey,
  resourcePath,
  type KubeClient,
  type KubeObject,
  type Manager,
} from '../../src/controller/runtime/index.js';
import { startTcpRelay } from './tcp-relay.js';

let cp: ControlPlane;
let admin: KubeClient;

beforeAll(async () => {
  cp = await startControlPlane({ controllers: [] });
  admin = createKubeClient(cp.kubeConfig);
});
afterAll(async () => {
  admin?.close();
  await cp?.stop();
});

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: cp.kubeConfig.clusters.map((cluster) => ({ ...cluster, server })),
    users: cp.kubeConfig.users,
    contexts: cp.kubeConfig.contexts,
    currentContext: cp.kubeConfig.currentContext,
  });
  return kc;
}

const cmPath = (name?: string) => resourcePath(CONFIGMAPS, 'default', name);
function createConfigMap(
  name: string,
  labels: Record<string, string>,
  data: Record<string, string> = {},
) {
  return admin.request({
    method: 'POST',
    path: cmPath(),
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data },
  });
}
const patchConfigMap = (name: string, data: Record<string, string>) =>
  admin.request({ method: 'PATCH', path: cmPath(name), body: { data } });
const deleteConfigMap = (name: string) => admin.request({ method: 'DELETE', path: cmPath(name) });

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

describe('the client', () => {
  it('speaks HTTP/2 to the apiserver: 1000 creates at once over one connection, every answer whole', async () => {
    const relay = await startTcpRelay(new URL(cp.server));
    const client = createKubeClient(kubeConfigFor(relay.url));
    try {
      const names = Array.from({ length: 1000 }, (_, index) => `burst-${index}`);
      const created = await Promise.all(
        names.map((name) =>
          client.request<ConfigMap>({
            method: 'POST',
            path: cmPath(),
            body: {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name, labels: { test: 'burst' } },
              data: { v: name },
            },
          }),
        ),
      );
      expect(created.map((each) => each.data?.v)).toEqual(names);
      // One TCP connection through the relay, as client-go keeps one.
      expect(relay.connections()).toBe(1);
    } finally {
      client.close();
      await relay.close();
      await admin.request({
        method: 'DELETE',
        path: cmPath(),
        query: { labelSelector: 'test=burst' },
      });
    }
  });
});

describe('informer', () => {
  it('sees adds, updates and deletes, and loses none across a cut and a half-open watch', async () => {
    const relay = await startTcpRelay(new URL(cp.server));
    const client = createKubeClient(kubeConfigFor(relay.url));
    const informer = createInformer<ConfigMap>({
      client,
      resource: CONFIGMAPS,
      namespace: 'default',
      labelSelector: 'test=informer',
      watchdogMs: 1500,
      initialBackoffMs: 100,
      maxBackoffMs: 500,
    });
    const seen: string[] = [];
    informer.onAdd((cm) => seen.push(`add ${cm.metadata?.name}`));
    informer.onUpdate((_, cm) => seen.push(`update ${cm.metadata?.name} ${cm.data?.v ?? ''}`));
    informer.onDelete((cm) => seen.push(`delete ${cm.metadata?.name}`));
    const label = { test: 'informer' };
    try {
      await createConfigMap('before', label);
      informer.start();
      await informer.waitForSync(AbortSignal.timeout(10_000));
      expect(seen).toEqual(['add before']);
      expect(informer.get('default', 'before')?.metadata?.managedFields).toBeUndefined();

      await createConfigMap('other', { test: 'not-me' });
      await createConfigMap('a', label);
      await patchConfigMap('a', { v: '1' });
      await deleteConfigMap('before');
      await vi.waitFor(() => expect(seen).toContain('delete before'), { timeout: 10_000 });
      expect(seen).toEqual(['add before', 'add a', 'update a 1', 'delete before']);

      // The watch connection breaks, and the apiserver stays unreachable for a while.
      relay.cut(true);
      await createConfigMap('during-cut', label);
      await patchConfigMap('a', { v: '2' });
      await new Promise((resolve) => setTimeout(resolve, 600));
      relay.cut(false);
      await vi.waitFor(() => expect(seen).toContain('update a 2'), { timeout: 10_000 });
      await vi.waitFor(() => expect(seen).toContain('add during-cut'), { timeout: 10_000 });

      // A half-open connection: nothing arrives, nothing errors; the watchdog restarts it.
      relay.freeze();
      await createConfigMap('during-freeze', label);
      await vi.waitFor(() => expect(seen).toContain('add during-freeze'), { timeout: 10_000 });

      expect(informer.list().map(objectKey).sort()).toEqual([
        'default/a',
        'default/during-cut',
        'default/during-freeze',
      ]);
      expect(seen.filter((event) => event.startsWith('add ')).sort()).toEqual([
        'add a',
        'add before',
        'add during-cut',
        'add during-freeze',
      ]);
    } finally {
      await informer.stop();
      client.close();
      await relay.close();
    }
  });
});

describe('manager with leader election', () => {
  it('lets one manager lead and reconcile; the other takes over within the lease after the first stops', async () => {
    const reconciled: Array<[string, string]> = [];
    const managers = new Map<string, Manager>();
    const makeManager = (identity: string) => {
      const manager = createManager({
        kubeConfig: cp.kubeConfig,
        namespace: 'default',
        leaderElection: {
          namespace: 'default',
          name: 'lorenz-test',
          identity,
          releaseOnCancel: false,
        },
        metricsBindAddress: '127.0.0.1:0',
        healthProbeBindAddress: '127.0.0.1:0',
        handleSignals: false,
      });
      const informer = manager.informer<ConfigMap>(CONFIGMAPS, { labelSelector: 'test=leader' });
      const controller = manager.controller({
        name: 'configmaps',
        reconcile: async (key) => void reconciled.push([identity, key]),
      });
      informer.onAdd((cm) => controller.enqueue(objectKey(cm)));
      informer.onUpdate((_, cm) => controller.enqueue(objectKey(cm)));
      managers.set(identity, manager);
      return manager;
    };
    const first = makeManager('first');
    const second = makeManager('second');
    try {
      await first.start();
      await vi.waitFor(() => expect(first.isLeader()).toBe(true), { timeout: 10_000 });
      await second.start();
      await second.waitForCacheSync(AbortSignal.timeout(10_000));
      const ready = await fetch(`http://127.0.0.1:${second.healthAddress!.port}/readyz`);
      expect(ready.status).toBe(200);

      await createConfigMap('lead-1', { test: 'leader' });
      await vi.waitFor(() => expect(reconciled).toContainEqual(['first', 'default/lead-1']), {
        timeout: 10_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(second.isLeader()).toBe(false);
      expect(reconciled.filter(([who]) => who === 'second')).toEqual([]);
      const metrics = await (
        await fetch(`http://127.0.0.1:${first.metricsAddress!.port}/metrics`)
      ).text();
      expect(metrics).toContain('leader_election_master_status{name="lorenz-test"} 1');
      expect(metrics).toMatch(
        /controller_runtime_reconcile_total\{controller="configmaps",result="success"\} [1-9]/,
      );

      // The leader goes away without releasing the lease (as a crash would).
      const stoppedAt = Date.now();
      await first.stop();
      expect(await first.done).toBe('stopped');
      await vi.waitFor(() => expect(second.isLeader()).toBe(true), {
        timeout: 25_000,
        interval: 200,
      });
      const takeoverMs = Date.now() - stoppedAt;
      expect(takeoverMs).toBeLessThan(15_000 + 2 * 2_400);
      // The new leader reconciles what is in its cache, and what comes next.
      await createConfigMap('lead-2', { test: 'leader' });
      await vi.waitFor(() => expect(reconciled).toContainEqual(['second', 'default/lead-2']), {
        timeout: 10_000,
      });
      expect(reconciled).toContainEqual(['second', 'default/lead-1']);
      console.log(`leader takeover after an unreleased lease: ${takeoverMs} ms`);
    } finally {
      await Promise.all([...managers.values()].map((manager) => manager.stop()));
    }
  });
});
