import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi, ApiException } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createKubeconfigFor,
  installCrds,
  startControlPlane,
  type ControlPlane,
} from '../../hack/cluster/control-plane.js';

const execFileAsync = promisify(execFile);

const WIDGET_CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.lorenz.dev
spec:
  group: test.lorenz.dev
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget }
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [size]
              properties:
                size: { type: integer, minimum: 1 }
                color: { type: string, enum: [red, blue] }
            status:
              type: object
              properties:
                phase: { type: string }
`;

const widgets = {
  group: 'test.lorenz.dev',
  version: 'v1',
  namespace: 'default',
  plural: 'widgets',
};

function widget(name: string, spec: Record<string, unknown>) {
  return { apiVersion: 'test.lorenz.dev/v1', kind: 'Widget', metadata: { name }, spec };
}

async function kubectl(cp: ControlPlane, kubeconfig: string, args: string[]) {
  return execFileAsync(cp.tools.kubectl, ['--kubeconfig', kubeconfig, ...args]).then(
    ({ stdout }) => ({ ok: true, out: stdout }),
    (error: { stderr?: string }) => ({ ok: false, out: error.stderr ?? '' }),
  );
}

async function pidsOf(cp: ControlPlane): Promise<number[]> {
  const text = await readFile(join(cp.dir, 'pids'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => Number(line.split(' ')[1]));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('control plane', () => {
  let cp: ControlPlane;
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'lorenz-cp-test-'));
    cp = await startControlPlane();
  });

  afterAll(async () => {
    await cp?.stop();
    await rm(scratch, { recursive: true, force: true });
  });

  it('serves /readyz on loopback to the admin kubeconfig, through the matching kubectl', async () => {
    expect(cp.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const readyz = await kubectl(cp, cp.kubeconfigPath, ['get', '--raw', '/readyz']);
    expect(readyz).toEqual({ ok: true, out: 'ok' });
    const version = await kubectl(cp, cp.kubeconfigPath, ['version', '-o', 'json']);
    const parsed = JSON.parse(version.out) as {
      clientVersion: { gitVersion: string };
      serverVersion: { gitVersion: string };
    };
    expect(parsed.clientVersion.gitVersion).toBe(parsed.serverVersion.gitVersion);
  });

  it('installs a CRD whose schema rejects invalid objects and whose status subresource works', async () => {
    const crdFile = join(scratch, 'widgets.yaml');
    await writeFile(crdFile, WIDGET_CRD);
    await installCrds(cp, [crdFile]);
    const api = cp.kubeConfig.makeApiClient(CustomObjectsApi);

    const rejected = await api
      .createNamespacedCustomObject({
        ...widgets,
        body: widget('too-small', { size: 0, color: 'green' }),
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(rejected).toBeInstanceOf(ApiException);
    const status = JSON.parse(String((rejected as ApiException<string>).body)) as {
      code: number;
      message: string;
    };
    expect(status.code).toBe(422);
    expect(status.message).toContain(
      'spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1',
    );
    expect(status.message).toContain('spec.color: Unsupported value: "green"');

    await api.createNamespacedCustomObject({ ...widgets, body: widget('ok', { size: 2 }) });
    const stored = (await api.getNamespacedCustomObject({ ...widgets, name: 'ok' })) as ReturnType<
      typeof widget
    > & {
      metadata: { resourceVersion: string };
    };
    await api.replaceNamespacedCustomObjectStatus({
      ...widgets,
      name: 'ok',
      body: { ...stored, status: { phase: 'Running' } },
    });
    const afterStatus = (await api.getNamespacedCustomObject({ ...widgets, name: 'ok' })) as {
      spec: { size: number };
      status?: { phase: string };
    };
    expect(afterStatus.status).toEqual({ phase: 'Running' });
    expect(afterStatus.spec.size).toBe(2);
  });

  it('admits Pods through ServiceAccount admission (the default ServiceAccount exists)', async () => {
    const core = cp.kubeConfig.makeApiClient(CoreV1Api);
    const pod = await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'sa-admitted' },
        spec: { containers: [{ name: 'main', image: 'busybox', command: ['true'] }] },
      },
    });
    expect(pod.spec?.serviceAccountName).toBe('default');
    expect(pod.spec?.volumes?.some((volume) => volume.name.startsWith('kube-api-access-'))).toBe(
      true,
    );
  });

  it('enforces RBAC: a user without bindings may not list pods', async () => {
    const kubeconfig = await createKubeconfigFor(cp, {
      name: 'nobody',
      groups: ['lorenz:testers'],
    });
    const result = await kubectl(cp, kubeconfig, ['get', 'pods', '-n', 'default']);
    expect(result.ok).toBe(false);
    expect(result.out).toContain(
      'User "nobody" cannot list resource "pods" in API group "" in the namespace "default"',
    );
  });

  it('runs beside a second control plane without collision, and stop leaves no process behind', async () => {
    const second = await startControlPlane();
    try {
      expect(second.server).not.toBe(cp.server);
      const core = second.kubeConfig.makeApiClient(CoreV1Api);
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: 'only-in-second' } },
      });
      const inFirst = await kubectl(cp, cp.kubeconfigPath, [
        'get',
        'configmap',
        'only-in-second',
        '-n',
        'default',
      ]);
      expect(inFirst.ok).toBe(false);
      expect(inFirst.out).toContain('not found');
    } finally {
      const pids = await pidsOf(second);
      expect(pids).toHaveLength(3);
      expect(pids.every(isAlive)).toBe(true);
      await second.stop();
      expect(pids.filter(isAlive)).toEqual([]);
      expect(existsSync(second.dir)).toBe(false);
    }
  });
});

describe('hack/dev-cluster.sh', () => {
  const script = join(process.cwd(), 'hack/dev-cluster.sh');
  let stateDir: string;

  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'lorenz-dev-cluster-test-'));
  });

  afterAll(async () => {
    await run(['down']);
    await rm(stateDir, { recursive: true, force: true });
  });

  function run(args: string[]) {
    return execFileAsync('bash', [script, ...args], {
      env: { ...process.env, LORENZ_DEV_CLUSTER_DIR: stateDir },
    }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
    );
  }

  it('brings a cluster up with eval-able lines, reports status, and goes down without leftovers', async () => {
    const up = await run(['up']);
    expect(up.code).toBe(0);
    const lines = up.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^export PATH=\S+:"\$PATH"$/);
    expect(lines[1]).toBe(`export KUBECONFIG=${join(stateDir, 'cluster', 'kubeconfig')}`);

    const readyz = await execFileAsync('bash', ['-c', `${up.stdout}\nkubectl get --raw /readyz`]);
    expect(readyz.stdout).toBe('ok');
    expect(await run(['up'])).toEqual(up);
    expect((await run(['status'])).stdout).toMatch(/^up https:\/\/127\.0\.0\.1:\d+\n$/);
    // The process node maps the operator image to this checkout's bundles by default, so a
    // `lorenz controller` started against this cluster runs IssueRuns end to end.
    const imageMap = JSON.parse(await readFile(join(stateDir, 'image-map.json'), 'utf8')) as Record<
      string,
      Record<string, string>
    >;
    expect(imageMap['ghcr.io/lorenz-dev/lorenz:0.1.0']?.['/lorenz/lorenz.js']).toMatch(
      /\/dist\/lorenz\.js$/,
    );

    const daemonPid = Number(await readFile(join(stateDir, 'daemon.pid'), 'utf8'));
    const pids = (await readFile(join(stateDir, 'cluster', 'pids'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => Number(line.split(' ')[1]));
    expect((await run(['down'])).code).toBe(0);
    expect(await run(['status'])).toEqual({ code: 1, stdout: 'down\n' });
    expect(existsSync(stateDir)).toBe(false);
    expect(isAlive(daemonPid)).toBe(false);
    // Children are reaped by init once their parent is gone; give it a moment.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(pids.filter(isAlive)).toEqual([]);
  });
});
