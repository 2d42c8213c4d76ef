// `lorenz server` on the local control plane with the real controller and real runs: what the
// server's integration tests and the web view's browser tests start. The server runs as its
// own read-only ServiceAccount (the chart's ClusterRole rules, impersonated), and callers
// are ServiceAccount tokens of two users: `operator` (may read and act in `default`) and
// `outsider` (may read only its own namespace `elsewhere`).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { openSqliteArchive } from '../../src/archive/sqlite.js';
import type { ArchiveStore } from '../../src/archive/types.js';
import { startServer, type RunningServer } from '../../src/server/main.js';
import { createLogger } from '../../src/controller/runtime/logger.js';
import { NAMESPACE, startOperatorEnv, type OperatorEnv } from '../integration/operator-harness.js';

export const SERVER_USER = 'system:serviceaccount:lorenz-system:lorenz-server';
export const OUTSIDER_NAMESPACE = 'elsewhere';

/** The server's rules, as the chart's ClusterRole has them (read-only, plus reviews). */
export const SERVER_RULES = [
  {
    apiGroups: ['lorenz.dev'],
    resources: ['workflows', 'issueruns'],
    verbs: ['get', 'list', 'watch'],
  },
  { apiGroups: [''], resources: ['pods', 'pods/log', 'events'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
];

/** What an operator of a namespace may do from the web view (docs/web-view.md). */
export const OPERATOR_RULES = [
  {
    apiGroups: ['lorenz.dev'],
    resources: ['workflows', 'issueruns'],
    verbs: ['get', 'list', 'watch', 'patch'],
  },
  { apiGroups: ['lorenz.dev'], resources: ['issueruns'], verbs: ['create'] },
];
export const VIEWER_RULES = [
  {
    apiGroups: ['lorenz.dev'],
    resources: ['workflows', 'issueruns'],
    verbs: ['get', 'list', 'watch'],
  },
];

export interface ServerEnv {
  env: OperatorEnv;
  store: ArchiveStore;
  /** The server in cluster mode (bearer tokens): `http://127.0.0.1:PORT`. */
  url: string;
  server: RunningServer;
  tokens: { operator: string; outsider: string };
  /** A kubeconfig file of the `operator` user (a token), for a local-mode server. */
  operatorKubeconfig: string;
  /** Starts another server in local mode with the operator's kubeconfig. */
  startLocal(): Promise<RunningServer>;
  stop(): Promise<void>;
}

export interface ServerEnvOptions {
  /** The web bundle to serve (default: a stub index.html). */
  webRoot?: string;
}

async function bind(
  env: OperatorEnv,
  namespace: string,
  name: string,
  rules: object[],
  subject: { namespace: string; name: string },
  cluster = false,
): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const scope = cluster ? '' : `/namespaces/${namespace}`;
  await env.admin.request({
    method: 'POST',
    path: `${rbac}${scope}/${cluster ? 'clusterroles' : 'roles'}`,
    body: { metadata: { name }, rules },
  });
  await env.admin.request({
    method: 'POST',
    path: `${rbac}${scope}/${cluster ? 'clusterrolebindings' : 'rolebindings'}`,
    body: {
      metadata: { name },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: cluster ? 'ClusterRole' : 'Role',
        name,
      },
      subjects: [{ kind: 'ServiceAccount', ...subject }],
    },
  });
}

export async function startServerEnv(options: ServerEnvOptions = {}): Promise<ServerEnv> {
  const env = await startOperatorEnv();
  const dir = await mkdtemp(join(tmpdir(), 'lorenz-server-it-'));
  const store = await openSqliteArchive(join(dir, 'archive.db'));
  await store.migrate();
  await env.startController({ archive: store });
  await env.kubectl('create', 'namespace', OUTSIDER_NAMESPACE);
  await env.kubectl('-n', OUTSIDER_NAMESPACE, 'create', 'serviceaccount', 'default');
  await env.kubectl('-n', NAMESPACE, 'create', 'serviceaccount', 'operator');
  await env.kubectl('-n', OUTSIDER_NAMESPACE, 'create', 'serviceaccount', 'outsider');
  await bind(
    env,
    '',
    'lorenz-server',
    SERVER_RULES,
    { namespace: 'lorenz-system', name: 'lorenz-server' },
    true,
  );
  await bind(env, NAMESPACE, 'lorenz-operator', OPERATOR_RULES, {
    namespace: NAMESPACE,
    name: 'operator',
  });
  await bind(env, OUTSIDER_NAMESPACE, 'lorenz-viewer', VIEWER_RULES, {
    namespace: OUTSIDER_NAMESPACE,
    name: 'outsider',
  });
  const token = async (namespace: string, name: string) =>
    (await env.kubectl('-n', namespace, 'create', 'token', name, '--duration=2h')).trim();
  const tokens = {
    operator: await token(NAMESPACE, 'operator'),
    outsider: await token(OUTSIDER_NAMESPACE, 'outsider'),
  };

  let webRoot = options.webRoot;
  if (!webRoot) {
    webRoot = join(dir, 'web');
    await import('node:fs/promises').then((fs) =>
      fs.mkdir(join(webRoot ?? '', 'assets'), { recursive: true }),
    );
    await writeFile(
      join(webRoot, 'index.html'),
      '<!doctype html><title>lorenz</title><script type="module" src="/assets/app.js"></script>\n',
    );
    await writeFile(join(webRoot, 'assets', 'app.js'), 'document.title = "lorenz";\n');
  }

  // The server as its own ServiceAccount: the admin kubeconfig, impersonating it.
  const admin = new KubeConfig();
  admin.loadFromFile(env.cp.kubeconfigPath);
  const user = admin.getCurrentUser();
  const serverConfig = new KubeConfig();
  serverConfig.loadFromOptions({
    clusters: admin.clusters,
    contexts: admin.contexts,
    currentContext: admin.currentContext,
    users: admin.users.map((entry) =>
      entry.name === user?.name ? { ...entry, impersonateUser: SERVER_USER } : entry,
    ),
  });
  const logger = createLogger({ level: process.env.LORENZ_IT_LOG ?? 'silent' });
  const server = await startServer({
    kubeConfig: serverConfig,
    bindAddress: '127.0.0.1:0',
    auth: 'token',
    archiveStore: store,
    webRoot,
    logger,
  });

  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('no cluster in the admin kubeconfig');
  const operator = new KubeConfig();
  operator.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'operator', token: tokens.operator }],
    contexts: [{ name: 'operator', cluster: cluster.name, user: 'operator', namespace: NAMESPACE }],
    currentContext: 'operator',
  });
  const operatorKubeconfig = join(dir, 'operator.kubeconfig');
  await writeFile(operatorKubeconfig, operator.exportConfig());
  const locals: RunningServer[] = [];

  return {
    env,
    store,
    url: `http://127.0.0.1:${server.address.port}`,
    server,
    tokens,
    operatorKubeconfig,
    async startLocal() {
      const local = await startServer({
        kubeconfig: operatorKubeconfig,
        bindAddress: '127.0.0.1:0',
        auth: 'local',
        // A namespaced user watches its namespace only.
        namespace: NAMESPACE,
        archiveStore: store,
        webRoot: webRoot ?? '',
        logger,
      });
      locals.push(local);
      return local;
    },
    async stop() {
      for (const local of locals) await local.close();
      await server.close();
      await env.stop();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One SSE stream read as events: `next(match)` waits for the first event that matches. */
export function readSse(url: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const events: { event: string; data: unknown; at: number }[] = [];
  const waiters: (() => void)[] = [];
  let status = 0;
  let responseHeaders: Headers | undefined;
  const done = (async () => {
    const response = await fetch(url, { headers, signal: controller.signal });
    status = response.status;
    responseHeaders = response.headers;
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of response.body ?? []) {
      pending += decoder.decode(chunk as Uint8Array, { stream: true });
      let end = pending.indexOf('\n\n');
      while (end >= 0) {
        const block = pending.slice(0, end);
        pending = pending.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = /^data: (.*)$/m.exec(block)?.[1];
        events.push({
          event,
          data: data === undefined ? undefined : JSON.parse(data),
          at: Date.now(),
        });
        for (const wake of waiters.splice(0)) wake();
        end = pending.indexOf('\n\n');
      }
    }
  })()
    .catch(() => undefined)
    .finally(() => {
      for (const wake of waiters.splice(0)) wake();
    });
  return {
    events,
    get status() {
      return status;
    },
    get headers() {
      return responseHeaders;
    },
    done,
    async next(
      match: (event: { event: string; data: unknown }) => boolean,
      ms = 30_000,
    ): Promise<{ event: string; data: unknown; at: number }> {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(
            `no matching SSE event in ${ms} ms (got ${events.map((e) => e.event).join(', ')})`,
          );
        await Promise.race([
          new Promise<void>((resolve) => waiters.push(resolve)),
          new Promise((resolve) => setTimeout(resolve, 200)),
          done,
        ]);
      }
    },
    close: () => controller.abort(),
  };
}
