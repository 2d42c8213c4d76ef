// The archive's readers on a real kube-apiserver: the read API authorizes every read with the
// caller's own RBAC (TokenReview, SubjectAccessReview as the controller's ServiceAccount), the
// CLI finds it through the apiserver's service proxy with the kubeconfig alone, and `lorenz
// get runs --all`, `lorenz logs` and `lorenz describe run` show live and archived runs. The
// store is a parameter (ARCHIVE_STORES): the same cases run against each implementation.
import http from 'node:http';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { startControlPlane, type ControlPlane } from '../../hack/cluster/control-plane.js';
import { startProcessNode, type ProcessNode } from '../../hack/process-node/index.js';
import type { ArchiveStore, RunRecord } from '../../src/archive/types.js';
import { createKubeClient, type KubeClient } from '../../src/controller/runtime/client.js';
import { archiveApiHandler } from '../../src/server/archive-api.js';
import { getRunsCommand, type RunCommandDeps } from '../../src/cli/runs/get-runs.js';
import { logsCommand } from '../../src/cli/runs/logs.js';
import { describeRunCommand } from '../../src/cli/runs/describe.js';
import { delegatingArchive } from '../../src/archive/delegate.js';
import { realArchiveStores } from '../support/archive-stores.js';
import { controllerKubeConfig, installOperator } from './operator-harness.js';

const exec = promisify(execFile);

/** The stores the readers are tested against. */
const ARCHIVE_STORES = realArchiveStores('lorenz-readers-it-');

const A = 'team-a';
const B = 'team-b';
const ISSUERUNS = (ns: string, name = '') =>
  `/apis/lorenz.dev/v1alpha1/namespaces/${ns}/issueruns${name ? `/${name}` : ''}`;

/** The machine's first non-loopback IPv4: the apiserver proxies to no loopback address. */
function hostAddress(): string {
  for (const list of Object.values(networkInterfaces()))
    for (const entry of list ?? [])
      if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  throw new Error('no non-loopback IPv4 address for the service proxy');
}

const runRecord = (over: Partial<RunRecord>): RunRecord => ({
  uid: 'uid',
  namespace: A,
  name: 'run',
  workflow: 'board',
  issueId: 'id-1',
  issueIdentifier: 'ENG-1',
  issueTitle: 'Fix it',
  phase: 'Succeeded',
  reason: 'IssueCompleted',
  attempts: 1,
  createdAt: '2026-01-02T10:00:00.000Z',
  startedAt: '2026-01-02T10:00:05.000Z',
  finishedAt: '2026-01-02T10:04:17.000Z',
  usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 },
  object: {},
  ...over,
});

const transcript = [
  {
    type: 'hook_execution',
    message: {
      status: 'started',
      hookName: 'before_run',
      command: 'npm ci',
      cwd: '/workspace',
      slot: 0,
    },
  },
  {
    type: 'hook_output',
    message: { hookName: 'before_run', slot: 0, seq: 0, text: 'added 42 packages\n' },
  },
  {
    type: 'hook_execution',
    message: {
      status: 'completed',
      hookName: 'before_run',
      command: 'npm ci',
      cwd: '/workspace',
      exitCode: 0,
      durationMs: 2300,
      output: 'added 42 packages\n',
      slot: 0,
    },
  },
  { type: 'turn_started', message: { turn: 1, sessionId: 's1' }, slot: 0 },
  {
    type: 'session_notification',
    message: {
      turn: 1,
      update: {
        sessionUpdate: 'tool_call',
        toolCallId: 't1',
        title: 'Read README.md',
        kind: 'read',
      },
    },
    slot: 0,
  },
  {
    type: 'session_notification',
    message: {
      turn: 1,
      update: {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: 'Fixed the \u001b[31mbug\u001b[0m.' },
      },
    },
    slot: 0,
  },
  {
    type: 'turn_completed',
    message: {
      turn: 1,
      stopReason: 'end_turn',
      usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 },
    },
    slot: 0,
  },
]
  .map((record) => `${JSON.stringify(record)}\n`)
  .join('');

describe.each(ARCHIVE_STORES)('the archive readers on $name', ({ open }) => {
  let cp: ControlPlane;
  let node: ProcessNode;
  let admin: KubeClient;
  let controller: KubeClient;
  let store: ArchiveStore;
  let server: http.Server;
  let port = 0;
  let dir: string;
  let readerToken = '';
  let readerKubeconfig = '';
  const seenHeaders: http.IncomingHttpHeaders[] = [];
  const kubectl = async (...args: string[]) =>
    (await exec(cp.tools.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args])).stdout;

  beforeAll(async () => {
    cp = await startControlPlane({ controllers: ['garbage-collector-controller'] });
    await installOperator(cp);
    admin = createKubeClient(cp.kubeConfig);
    // The reviews are made as the controller's ServiceAccount: config/rbac must grant them.
    controller = createKubeClient(controllerKubeConfig(cp));
    node = await startProcessNode({ controlPlane: cp });
    dir = await mkdtemp(join(tmpdir(), 'lorenz-readers-'));
    await kubectl('-n', 'lorenz-system', 'create', 'serviceaccount', 'default');
    for (const ns of [A, B]) {
      await kubectl('create', 'namespace', ns);
      await kubectl('-n', ns, 'create', 'serviceaccount', 'default');
    }
    // A reader of team-a only: runs, their Pods and logs, Events.
    await kubectl('-n', A, 'create', 'serviceaccount', 'reader');
    await kubectl(
      '-n',
      A,
      'create',
      'role',
      'runs-reader',
      '--verb=get,list,watch',
      '--resource=issueruns.lorenz.dev,pods,pods/log,events',
    );
    await kubectl(
      '-n',
      A,
      'create',
      'rolebinding',
      'runs-reader',
      '--role=runs-reader',
      `--serviceaccount=${A}:reader`,
    );
    // What the chart grants every authenticated user (templates/archive-api.yaml): the
    // archive Service's proxy, and a list of Services to find it.
    await admin.request({
      method: 'POST',
      path: '/apis/rbac.authorization.k8s.io/v1/namespaces/lorenz-system/roles',
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'lorenz-archive-reader' },
        rules: [
          { apiGroups: [''], resources: ['services'], verbs: ['list'] },
          {
            apiGroups: [''],
            resources: ['services/proxy'],
            resourceNames: ['http:lorenz-archive:archive'],
            verbs: ['get'],
          },
        ],
      },
    });
    await admin.request({
      method: 'POST',
      path: '/apis/rbac.authorization.k8s.io/v1/namespaces/lorenz-system/rolebindings',
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'lorenz-archive-reader' },
        roleRef: {
          apiGroup: 'rbac.authorization.k8s.io',
          kind: 'Role',
          name: 'lorenz-archive-reader',
        },
        subjects: [
          { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' },
        ],
      },
    });
    readerToken = (await kubectl('-n', A, 'create', 'token', 'reader', '--duration=1h')).trim();

    // The kubeconfig a person of team-a has: the cluster, a token, namespace team-a.
    const adminConfig = new KubeConfig();
    adminConfig.loadFromFile(cp.kubeconfigPath);
    const cluster = adminConfig.getCurrentCluster();
    if (!cluster) throw new Error('no cluster in the admin kubeconfig');
    const reader = new KubeConfig();
    reader.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'reader', token: readerToken }],
      contexts: [{ name: 'reader', cluster: cluster.name, user: 'reader', namespace: A }],
      currentContext: 'reader',
    });
    readerKubeconfig = join(dir, 'reader.kubeconfig');
    await writeFile(readerKubeconfig, reader.exportConfig());

    store = await open();
    await store.migrate();
    const handler = archiveApiHandler({ store, client: controller });
    server = http.createServer((request, response) => {
      seenHeaders.push(request.headers);
      void handler(request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as { port: number }).port;

    // The controller's Service with the archive port, its endpoint this process.
    await admin.request({
      method: 'POST',
      path: '/api/v1/namespaces/lorenz-system/services',
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: 'lorenz-archive',
          labels: {
            'app.kubernetes.io/name': 'lorenz',
            'app.kubernetes.io/component': 'controller',
          },
        },
        spec: { ports: [{ name: 'archive', port: 8091, targetPort: port, protocol: 'TCP' }] },
      },
    });
    // The apiserver proxies only to an endpoint that is a Pod's IP (and never a loopback
    // one): a stand-in for the controller's Pod, on no node, with this machine's address.
    const ip = hostAddress();
    // The Endpoints and the EndpointSlice name the same Pod and port: the proxy reads either.
    const standInPod = {
      kind: 'Pod',
      name: 'lorenz-controller-stand-in',
      namespace: 'lorenz-system',
    };
    const archivePorts = [{ name: 'archive', port, protocol: 'TCP' }];
    await admin.request({
      method: 'POST',
      path: '/api/v1/namespaces/lorenz-system/pods',
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'lorenz-controller-stand-in' },
        spec: { nodeName: 'elsewhere', containers: [{ name: 'controller', image: 'none' }] },
      },
    });
    await admin.request({
      method: 'PATCH',
      path: '/api/v1/namespaces/lorenz-system/pods/lorenz-controller-stand-in/status',
      body: { status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], hostIP: ip } },
    });
    await admin.request({
      method: 'POST',
      path: '/api/v1/namespaces/lorenz-system/endpoints',
      body: {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'lorenz-archive' },
        subsets: [
          {
            addresses: [
              {
                ip,
                nodeName: 'elsewhere',
                targetRef: standInPod,
              },
            ],
            ports: archivePorts,
          },
        ],
      },
    });
    await admin.request({
      method: 'POST',
      path: '/apis/discovery.k8s.io/v1/namespaces/lorenz-system/endpointslices',
      body: {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: 'lorenz-archive-1',
          labels: { 'kubernetes.io/service-name': 'lorenz-archive' },
        },
        addressType: 'IPv4',
        endpoints: [
          {
            addresses: [ip],
            conditions: { ready: true },
            nodeName: 'elsewhere',
            targetRef: standInPod,
          },
        ],
        ports: archivePorts,
      },
    });

    // Archived: one deleted run in each namespace, with a transcript, attempts and Events.
    for (const [ns, uid] of [
      [A, 'uid-a-old'],
      [B, 'uid-b-old'],
    ] as const) {
      await store.putRun(
        runRecord({
          uid,
          namespace: ns,
          name: 'old-run',
          deletedAt: '2026-01-02T11:00:00.000Z',
          branch: 'lorenz/eng-1',
        }),
      );
      await store.putAttempt({
        runUid: uid,
        slot: 0,
        attempt: 1,
        podName: 'old-run-0-1',
        podUid: `${uid}-pod1`,
        node: 'node-7',
        phase: 'Failed',
        reason: 'HookFailed',
        message: 'before_run exited 1',
        startedAt: '2026-01-02T10:00:05.000Z',
        finishedAt: '2026-01-02T10:00:09.000Z',
        turns: 0,
        usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        hooks: [
          { status: 'failed', hookName: 'before_run', exitCode: 1, durationMs: 900, slot: 0 },
        ],
      });
      await store.putAttempt({
        runUid: uid,
        slot: 0,
        attempt: 2,
        podName: 'old-run-0-2',
        podUid: `${uid}-pod2`,
        host: 'worker-1.example',
        phase: 'Succeeded',
        reason: 'IssueCompleted',
        startedAt: '2026-01-02T10:01:00.000Z',
        finishedAt: '2026-01-02T10:04:17.000Z',
        turns: 1,
        usage: { inputTokens: 120, outputTokens: 30, totalTokens: 150 },
        hooks: [
          { status: 'completed', hookName: 'before_run', exitCode: 0, durationMs: 2300, slot: 0 },
        ],
      });
      await store.putEvents([
        {
          runUid: uid,
          uid: `${uid}-ev1`,
          involvedKind: 'IssueRun',
          involvedName: 'old-run',
          type: 'Warning',
          reason: 'AttemptFailed',
          message: 'attempt 1: before_run exited 1',
          count: 1,
          lastTime: '2026-01-02T10:00:09.000Z',
        },
      ]);
      await store.appendLog({
        runUid: uid,
        podUid: `${uid}-pod2`,
        slot: 0,
        attempt: 2,
        offset: 0,
        data: transcript,
        capBytes: 1 << 20,
      });
    }
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server?.closeAllConnections();
    await store?.close();
    admin?.close();
    controller?.close();
    await node?.stop();
    await cp?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const api = async (path: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
    return { status: response.status, headers: response.headers, body: await response.text() };
  };
  const bearer = () => ({ Authorization: `Bearer ${readerToken}` });
  /** An IssueRun in team-a on the board Workflow, as the admin: a live run, not archived. */
  const createLiveRun = (name: string, issue: { identifier: string; title: string }) =>
    admin.request<{ metadata: { uid: string } }>({
      method: 'POST',
      path: ISSUERUNS(A),
      body: {
        apiVersion: 'lorenz.dev/v1alpha1',
        kind: 'IssueRun',
        metadata: { name },
        spec: { workflowRef: { name: 'board' }, issue: { ...issue, state: 'Todo' } },
      },
    });
  const run = async (command: typeof getRunsCommand, args: string[], deps: RunCommandDeps = {}) => {
    let stdout = '';
    let stderr = '';
    const code = await command(
      args,
      (text) => (stdout += text),
      (text) => (stderr += text),
      {
        defaultArchivePath: join(dir, 'no-archive.db'),
        ...deps,
      },
    );
    return { code, stdout, stderr };
  };

  it('answers a token allowed in team-a with its runs, 403 for team-b, 401 without a token', async () => {
    const own = await api(`/api/v1/runs?namespace=${A}`, bearer());
    expect(own.status, own.body).toBe(200);
    expect(own.headers.get('content-type')).toMatch(/^application\/json/);
    expect(own.headers.get('x-content-type-options')).toBe('nosniff');
    expect(JSON.parse(own.body).runs.map((r: RunRecord) => r.uid)).toEqual(['uid-a-old']);

    const other = await api(`/api/v1/runs?namespace=${B}`, bearer());
    expect(other.status).toBe(403);
    expect(JSON.parse(other.body)).toMatchObject({ code: 'forbidden' });
    expect((await api(`/api/v1/namespaces/${B}/runs/old-run`, bearer())).status).toBe(403);
    expect((await api(`/api/v1/namespaces/${B}/runs/old-run/log`, bearer())).status).toBe(403);

    const none = await api(`/api/v1/runs?namespace=${A}`);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body)).toMatchObject({ code: 'unauthenticated' });
    expect((await api('/api/v1/runs', { Authorization: 'Bearer not-a-token' })).status).toBe(401);

    // Over all namespaces: only the rows of the namespaces this caller may list.
    const all = await api('/api/v1/runs', bearer());
    expect(JSON.parse(all.body).runs.map((r: RunRecord) => r.namespace)).toEqual([A]);
    const usage = await api('/api/v1/usage', bearer());
    expect(JSON.parse(usage.body).rows.map((r: { namespace: string }) => r.namespace)).toEqual([A]);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=abc', 'limit'],
    ['phase=Exploded', 'phase'],
    ['since=yesterday', 'since'],
    ['namespace=Not_A_Namespace', 'namespace'],
    ['colour=blue', 'colour'],
  ])('refuses ?%s with a 400 naming %s', async (query, parameter) => {
    const answer = await api(`/api/v1/runs?${query}`, bearer());
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'invalid_parameter', parameter });
  });

  it('streams a run log as NDJSON of LogEntry', async () => {
    const answer = await api(`/api/v1/namespaces/${A}/runs/old-run/log?attempt=2`, bearer());
    expect(answer.status).toBe(200);
    const entries = answer.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(entries).toEqual([
      expect.objectContaining({
        kind: 'data',
        piece: expect.objectContaining({ data: transcript }),
      }),
    ]);
  });

  it('is reached through the apiserver service proxy: Authorization consumed, X-Lorenz-Token passed', async () => {
    seenHeaders.length = 0;
    const reader = new KubeConfig();
    reader.loadFromFile(readerKubeconfig);
    const client = createKubeClient(reader);
    try {
      const page = await client.request<{ runs: RunRecord[] }>({
        path: '/api/v1/namespaces/lorenz-system/services/http:lorenz-archive:archive/proxy/api/v1/runs',
        query: { namespace: A },
        headers: { 'X-Lorenz-Token': readerToken },
      });
      expect(page.runs.map((r) => r.uid)).toEqual(['uid-a-old']);
      const seen = seenHeaders.at(-1) ?? {};
      expect(seen.authorization).toBeUndefined();
      expect(seen['x-lorenz-token']).toBe(readerToken);
      // Without the header the proxied request has no identity the API can check.
      await expect(
        client.request({
          path: '/api/v1/namespaces/lorenz-system/services/http:lorenz-archive:archive/proxy/api/v1/runs',
          query: { namespace: A },
        }),
      ).rejects.toMatchObject({ statusCode: 401 });
    } finally {
      client.close();
    }
  });

  it('lorenz get runs --all lists a live run and an archived deleted run in one table', async () => {
    await createLiveRun('live-run', { identifier: 'ENG-2', title: 'Live one' });
    const result = await run(getRunsCommand, ['--all', '--kubeconfig', readerKubeconfig]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const [header, ...rows] = result.stdout.trimEnd().split('\n');
    expect(header).toMatch(
      /^NAME\s+WORKFLOW\s+ISSUE\s+PHASE\s+REASON\s+ATTEMPT\s+STARTED\s+DURATION\s+SOURCE$/,
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(
      /^live-run\s+board\s+ENG-2\s+Pending\s+<none>\s+0\s+\S+\s+<none>\s+Live$/,
    );
    expect(rows[1]).toMatch(
      /^old-run\s+board\s+ENG-1\s+Succeeded\s+IssueCompleted\s+1\s+\S+\s+4m12s\s+Archived$/,
    );

    // Without --all: live only, and no archive looked for.
    const live = await run(getRunsCommand, ['--kubeconfig', readerKubeconfig]);
    expect(live.stdout.trimEnd().split('\n')).toHaveLength(2);
  });

  it('with client certificates only (the admin), says the proxy cannot carry them and reads --archive-dsn', async () => {
    const noArchive = await run(getRunsCommand, ['--all', '-A', '--kubeconfig', cp.kubeconfigPath]);
    expect(noArchive.stderr).toMatch(/no bearer token \(client certificates only\).*--archive-dsn/);
    expect(noArchive.stdout).not.toContain('old-run');
    const direct = await run(
      getRunsCommand,
      ['--all', '-A', '--kubeconfig', cp.kubeconfigPath, '--archive-dsn', 'sqlite:/in-memory'],
      {
        openStore: async () => delegatingArchive(() => store),
      },
    );
    expect(direct.stderr).toBe('');
    expect(direct.stdout).toMatch(/team-a\s+old-run/);
    expect(direct.stdout).toMatch(/team-b\s+old-run/);
  });

  it('lorenz logs of an archived run prints the transcript readably; -o json unchanged', async () => {
    const text = await run(logsCommand, ['old-run', '--kubeconfig', readerKubeconfig]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe(
      [
        '==> slot 0 attempt 2 (archived) <==',
        '▶ hook before_run: npm ci',
        'added 42 packages',
        '■ hook before_run completed: exit 0 in 2.3s',
        '── turn 1 ──',
        '→ Read README.md (read)',
        'Fixed the \\x1b[31mbug\\x1b[0m.',
        'turn 1 completed (end_turn); tokens: 120 in, 30 out, 150 total',
        '',
      ].join('\n'),
    );
    const json = await run(logsCommand, [
      'old-run',
      '-o',
      'json',
      '--kubeconfig',
      readerKubeconfig,
    ]);
    expect(json.stdout).toBe(transcript);
    const forbidden = await run(logsCommand, [
      'old-run',
      '-n',
      B,
      '--kubeconfig',
      readerKubeconfig,
    ]);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/^lorenz: kube_forbidden: /);
  });

  it('lorenz describe run shows attempts, hooks, turns, tool calls, usage and Events of an archived run', async () => {
    const result = await run(describeRunCommand, ['old-run', '--kubeconfig', readerKubeconfig]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Name:\s+old-run$/m);
    expect(result.stdout).toMatch(/^Source:\s+Archived \(deleted 2026-01-02T11:00:00.000Z\)$/m);
    expect(result.stdout).toMatch(/^Branch:\s+lorenz\/eng-1$/m);
    expect(result.stdout).toMatch(/^Duration:\s+4m12s$/m);
    expect(result.stdout).toMatch(/^Turns:\s+1$/m);
    expect(result.stdout).toMatch(/^Tool calls:\s+1$/m);
    expect(result.stdout).toMatch(/^Usage:\s+120 in, 30 out, 150 total tokens$/m);
    expect(result.stdout).toMatch(
      /^\s+0\s+1\s+old-run-0-1\s+node-7\s+\S+\s+4s\s+Failed\s+HookFailed: before_run exited 1$/m,
    );
    expect(result.stdout).toMatch(
      /^\s+0\s+2\s+old-run-0-2\s+ssh worker-1.example\s+\S+\s+3m17s\s+Succeeded\s+IssueCompleted$/m,
    );
    expect(result.stdout).toMatch(/^\s+0\s+1\s+before_run\s+failed\s+1\s+900ms$/m);
    expect(result.stdout).toMatch(/^\s+0\s+2\s+before_run\s+completed\s+0\s+2.3s$/m);
    expect(result.stdout).toMatch(
      /^\s+Warning\s+AttemptFailed\s+\S+\s+IssueRun\/old-run\s+attempt 1: before_run exited 1$/m,
    );
  });

  it('lorenz logs -f of a live run shows lines as they appear and exits 0 when the Pod log ends', async () => {
    const created = await createLiveRun('follow-run', { identifier: 'ENG-3', title: 'Follow' });
    const line = (i: number) =>
      JSON.stringify({
        type: 'hook_output',
        message: { hookName: 'before_run', slot: 0, seq: i, text: `step ${i}\n` },
      });
    const script = [1, 2, 3].map((i) => `printf '%s\\n' '${line(i)}'; sleep 1`).join('; ');
    await admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${A}/pods`,
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'follow-run-0-1',
          labels: {
            'lorenz.dev/issuerun': 'follow-run',
            'lorenz.dev/slot': '0',
            'lorenz.dev/attempt': '1',
          },
          ownerReferences: [
            {
              apiVersion: 'lorenz.dev/v1alpha1',
              kind: 'IssueRun',
              name: 'follow-run',
              uid: created.metadata.uid,
            },
          ],
        },
        spec: {
          restartPolicy: 'Never',
          containers: [
            { name: 'agent', image: 'lorenz-test/agent:1', command: ['sh', '-c', script] },
          ],
        },
      },
    });
    const arrivals: { text: string; at: number }[] = [];
    const started = Date.now();
    const code = await logsCommand(
      ['follow-run', '-f', '--kubeconfig', readerKubeconfig],
      (text) => arrivals.push({ text, at: Date.now() - started }),
      () => {},
      { defaultArchivePath: join(dir, 'no-archive.db') },
    );
    const ended = Date.now() - started;
    expect(code).toBe(0);
    expect(arrivals.map((each) => each.text).join('')).toBe('step 1\nstep 2\nstep 3\n');
    // Streamed: the first line was shown while the Pod still had two seconds to print.
    const first = arrivals[0]?.at ?? ended;
    expect(ended - first).toBeGreaterThanOrEqual(1500);

    // Live, describe reads the cluster: the Pod is the attempt, on the process node.
    for (let tries = 0; tries < 100; tries += 1) {
      const pod = await admin.request<{ status?: { phase?: string } }>({
        path: `/api/v1/namespaces/${A}/pods/follow-run-0-1`,
      });
      if (pod.status?.phase === 'Succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const described = await run(describeRunCommand, [
      'follow-run',
      '--kubeconfig',
      readerKubeconfig,
    ]);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toMatch(/^Source:\s+Live \(in the cluster\)$/m);
    expect(described.stdout).toMatch(
      /^\s+0\s+1\s+follow-run-0-1\s+process-node\s+\S+\s+\d+s\s+Succeeded\s+exit 0 \(Completed\)$/m,
    );
  });
});
