// hack/tools.sh lookup order and messages, and the pure parts of the cluster harness, with
// real bash, real files and fake binaries (no Go build, no apiserver).
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extendedKeyUsage, subjectAltNames } from '../../../hack/cluster/certs.js';
import { apiserverArgs, DEFAULT_CONTROLLERS, etcdArgs } from '../../../hack/cluster/components.js';
import { inClusterOptions, renderReadyEnv } from '../../../hack/cluster/main.js';
import { parseToolsOutput } from '../../../hack/cluster/tools.js';
import type { ClusterPki } from '../../../hack/cluster/certs.js';

const execFileAsync = promisify(execFile);
const TOOLS_SH = resolve('hack/tools.sh');
const VERSIONS = { k8s: 'v1.36.3', etcd: 'v3.6.16', helm: 'v3.22.0' };

async function fakeBinary(path: string): Promise<string> {
  await writeFile(path, '#!/bin/sh\necho fake\n');
  await chmod(path, 0o755);
  return path;
}

async function runTools(args: string[], env: Record<string, string>) {
  return execFileAsync('bash', [TOOLS_SH, ...args], {
    env: { PATH: '/usr/bin:/bin', HOME: env.HOME ?? '/nonexistent', ...env },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

describe('hack/tools.sh', () => {
  let root: string;
  let cache: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'lorenz-tools-'));
    cache = join(root, 'cache');
    await mkdir(cache);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  async function fillCache(): Promise<void> {
    await fakeBinary(join(cache, `kube-apiserver-${VERSIONS.k8s}`));
    await fakeBinary(join(cache, `kubectl-${VERSIONS.k8s}`));
    await fakeBinary(join(cache, `kube-controller-manager-${VERSIONS.k8s}`));
    await fakeBinary(join(cache, `etcd-${VERSIONS.etcd}`));
    await fakeBinary(join(cache, `helm-${VERSIONS.helm}`));
  }

  it('prefers TEST_ASSET_* over KUBEBUILDER_ASSETS over the versioned cache, and links a bin dir', async () => {
    await fillCache();
    const assets = join(root, 'assets');
    await mkdir(assets);
    await fakeBinary(join(assets, 'etcd'));
    await fakeBinary(join(assets, 'kube-apiserver'));
    const override = await fakeBinary(join(root, 'my-apiserver'));

    const result = await runTools([], {
      LORENZ_TOOLS_CACHE: cache,
      KUBEBUILDER_ASSETS: assets,
      TEST_ASSET_KUBE_APISERVER: override,
    });
    expect(result.code).toBe(0);
    const tools = parseToolsOutput(result.stdout);
    expect(tools).toMatchObject({
      kubeApiserver: override,
      etcd: join(assets, 'etcd'),
      kubectl: join(cache, `kubectl-${VERSIONS.k8s}`),
      kubeControllerManager: join(cache, `kube-controller-manager-${VERSIONS.k8s}`),
      helm: join(cache, `helm-${VERSIONS.helm}`),
    });
    expect(await readlink(join(tools.binDir, 'kubectl'))).toBe(tools.kubectl);
    expect(await readlink(join(tools.binDir, 'kube-apiserver'))).toBe(override);
    expect(result.stderr).toBe('');
  });

  it('prints one path with `path <tool>`', async () => {
    await fillCache();
    const result = await runTools(['path', 'kubectl'], { LORENZ_TOOLS_CACHE: cache });
    expect(result).toMatchObject({
      code: 0,
      stdout: `${join(cache, `kubectl-${VERSIONS.k8s}`)}\n`,
    });
  });

  it.each<{ what: string; args: string[]; env: Record<string, string>; message: string }>([
    {
      what: 'an override that is not executable',
      args: ['path', 'etcd'],
      env: { TEST_ASSET_ETCD: '/nonexistent/etcd' },
      message: 'TEST_ASSET_ETCD=/nonexistent/etcd is not an executable file',
    },
    {
      what: 'a cold cache without go on PATH',
      args: ['path', 'kubectl'],
      env: {},
      message: "cannot build kubectl: 'go' is not on PATH",
    },
    {
      what: 'a progress interval that is not whole seconds',
      args: ['path', 'kubectl'],
      env: { LORENZ_PROGRESS_INTERVAL: '0.5' },
      message: "LORENZ_PROGRESS_INTERVAL is a whole number of seconds (15 when unset), not '0.5'",
    },
    {
      what: 'an unknown tool',
      args: ['path', 'kube-dns'],
      env: {},
      message: "unknown tool 'kube-dns'",
    },
  ])('fails clearly on $what', async ({ args, env, message }) => {
    const result = await runTools(args, { LORENZ_TOOLS_CACHE: cache, ...env });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
  });
});

/**
 * A stand-in `go` for hack/tools.sh's build of kubectl: each step (the module download, its
 * dependencies, `go build -v` downloading, compiling, linking) takes STEP seconds, so the
 * heartbeat (every second here) sees each one. FAIL=1 makes the build fail as go does.
 */
const STUB_GO = `#!/bin/bash
set -e
step() { sleep "\${STEP:-1.2}"; }
case "$1 $2" in
  "env GOVERSION") echo go1.26.0 ;;
  "mod download")
    if [ "$3" = -json ]; then
      mkdir -p "$STUB_DIR/mod"
      printf 'module k8s.io/kubernetes\n\ngo 1.25\n\nreplace k8s.io/api => ./staging/src/k8s.io/api\n' >"$STUB_DIR/mod/go.mod"
      step
      printf '{\n\t"Path": "k8s.io/kubernetes",\n\t"GoMod": "%s"\n}\n' "$STUB_DIR/mod/go.mod"
    else
      step
    fi ;;
  "build -v")
    while [ "$1" != -o ]; do shift; done
    out=$2 main=$3
    echo "go: downloading k8s.io/api v0.36.3" >&2; step
    echo "k8s.io/api/core/v1" >&2; echo "k8s.io/client-go/rest" >&2; step
    if [ "$FAIL" = 1 ]; then
      echo "# k8s.io/client-go/rest" >&2
      echo "rest/client.go:12:2: undefined: Config" >&2
      exit 1
    fi
    echo "$main" >&2; step
    printf '#!/bin/sh\necho kubectl\n' >"$out"; chmod +x "$out" ;;
  *) echo "stub go: unexpected $*" >&2; exit 2 ;;
esac
`;

describe('hack/tools.sh building a tool (a stand-in go on PATH)', () => {
  let root: string;
  let cache: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'lorenz-tools-build-'));
    cache = join(root, 'cache');
    await mkdir(join(root, 'bin'), { recursive: true });
    await writeFile(join(root, 'bin', 'go'), STUB_GO, { mode: 0o755 });
    env = {
      PATH: `${join(root, 'bin')}:/usr/bin:/bin`,
      STUB_DIR: root,
      LORENZ_TOOLS_CACHE: cache,
      LORENZ_PROGRESS_INTERVAL: '1',
    };
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const heartbeats = (stderr: string) =>
    stderr.split('\n').filter((line) => line.startsWith('[tools] building kubectl v1.36.3: '));

  it('says every interval which step the build is at, for how long; stdout is only the path', async () => {
    const result = await runTools(['path', 'kubectl'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${join(cache, `kubectl-${VERSIONS.k8s}`)}\n`);
    expect(result.stderr).toContain(
      '[tools] building kubectl v1.36.3 (no earlier build in this cache: a cold build takes minutes; progress every 1 s)',
    );
    const beats = heartbeats(result.stderr);
    for (const step of [
      /: downloading the module k8s\.io\/kubernetes@v1\.36\.3 \(\d+ s\)$/,
      /: downloading the modules k8s\.io\/kubernetes@v1\.36\.3 needs \(\d+ s\)$/,
      /: go build: downloading modules: 1 so far, now k8s\.io\/api v0\.36\.3 \(\d+ s\)$/,
      /: go build: compiling: 2 packages so far, now k8s\.io\/client-go\/rest \(\d+ s\)$/,
      /: go build: linking \(after 3 packages\) \(\d+ s\)$/,
    ]) {
      expect(
        beats.some((line) => step.test(line)),
        `${step} in:\n${beats.join('\n')}`,
      ).toBe(true);
    }
    expect(result.stderr).toMatch(/\[tools\] built kubectl v1\.36\.3 in \d+ s -> /);
    // The duration is kept for the next build's estimate.
    const log = await readFile(join(cache, 'build-times.log'), 'utf8');
    expect(log).toMatch(/^\S+Z kubectl v1\.36\.3 \d+s\n$/);
  });

  it('estimates from the last build of the tool in the cache', async () => {
    await mkdir(cache, { recursive: true });
    await writeFile(
      join(cache, 'build-times.log'),
      '2026-01-01T00:00:00Z kubectl v1.35.0 100s\n2026-01-02T00:00:00Z kubectl v1.36.3 370s\n' +
        '2026-01-02T00:10:00Z etcd v3.6.16 40s\n',
    );
    const result = await runTools(['path', 'kubectl'], env);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      '[tools] building kubectl v1.36.3 (took ~6 min last time; progress every 1 s)',
    );
    const beats = heartbeats(result.stderr);
    expect(beats.length).toBeGreaterThan(0);
    for (const line of beats) expect(line).toMatch(/ \(\d+ s; took ~6 min last time\)$/);
  });

  it("fails with go's own messages, not the package names, and records no duration", async () => {
    const result = await runTools(['path', 'kubectl'], { ...env, FAIL: '1', STEP: '0.1' });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      '# k8s.io/client-go/rest\nrest/client.go:12:2: undefined: Config\n',
    );
    expect(result.stderr).not.toContain('k8s.io/api/core/v1');
    expect(result.stderr).toContain('[tools] error: building kubectl v1.36.3 failed');
    await expect(readFile(join(cache, 'build-times.log'), 'utf8')).rejects.toThrow();
  });
});

describe('cluster harness data', () => {
  const pki = {
    ca: { certPath: '/c/ca.crt', keyPath: '/c/ca.key' },
    apiserver: { certPath: '/c/apiserver.crt', keyPath: '/c/apiserver.key' },
    admin: { certPath: '/c/admin.crt', keyPath: '/c/admin.key' },
    kubeletClient: { certPath: '/c/kc.crt', keyPath: '/c/kc.key' },
    serviceAccount: { privateKeyPath: '/c/sa.key', publicKeyPath: '/c/sa.pub' },
  } satisfies ClusterPki;
  const ports = { etcdClient: 2001, etcdPeer: 2002, apiserver: 6443 };

  it('keeps the apiserver on loopback with RBAC, kubelet TLS verification and the given ports', () => {
    const args = apiserverArgs(pki, ports, ['--v=2']);
    expect(args).toEqual(
      expect.arrayContaining([
        '--etcd-servers=http://127.0.0.1:2001',
        '--bind-address=127.0.0.1',
        '--secure-port=6443',
        '--authorization-mode=Node,RBAC',
        '--kubelet-certificate-authority=/c/ca.crt',
        '--kubelet-client-certificate=/c/kc.crt',
        '--service-account-signing-key-file=/c/sa.key',
        '--v=2',
      ]),
    );
    expect(args.some((arg) => arg.startsWith('--disable-admission-plugins'))).toBe(false);
  });

  it('runs etcd on loopback without fsync', () => {
    expect(etcdArgs('/d/etcd', ports)).toEqual(
      expect.arrayContaining([
        '--listen-client-urls=http://127.0.0.1:2001',
        '--initial-cluster=lorenz=http://127.0.0.1:2002',
        '--unsafe-no-fsync',
      ]),
    );
  });

  it.each([
    { usage: 'server' as const, eku: 'serverAuth' },
    { usage: 'client' as const, eku: 'clientAuth' },
    { usage: 'both' as const, eku: 'serverAuth,clientAuth' },
  ])('maps $usage certificates to extendedKeyUsage $eku', ({ usage, eku }) => {
    expect(extendedKeyUsage(usage)).toBe(eku);
  });

  it('lists DNS and IP subject alternative names', () => {
    expect(
      subjectAltNames({
        name: 'x',
        commonName: 'x',
        usage: 'server',
        dnsNames: ['localhost'],
        ipAddresses: ['127.0.0.1'],
      }),
    ).toBe('subjectAltName=DNS:localhost,IP:127.0.0.1');
    expect(subjectAltNames({ name: 'x', commonName: 'x', usage: 'client' })).toBeUndefined();
  });

  it('writes ready.env values that survive the shell', async () => {
    const text = renderReadyEnv({
      SERVER: 'https://127.0.0.1:1',
      KUBECONFIG_PATH: "/tmp/it's here",
    });
    const { stdout } = await execFileAsync('bash', [
      '-c',
      `${text}\nprintf '%s|%s' "$SERVER" "$KUBECONFIG_PATH"`,
    ]);
    expect(stdout).toBe("https://127.0.0.1:1|/tmp/it's here");
  });

  it('listens beyond loopback and runs the Deployment loops only when asked to (make e2e-local)', () => {
    expect(inClusterOptions(undefined)).toEqual({});
    const options = inClusterOptions('10.89.0.6');
    // Appended after the defaults: the apiserver's last value of a flag wins.
    const args = apiserverArgs(pki, ports, options.extraApiserverArgs);
    const last = (flag: string) => args.filter((arg) => arg.startsWith(`${flag}=`)).at(-1);
    expect(last('--bind-address')).toBe('--bind-address=0.0.0.0');
    expect(last('--advertise-address')).toBe('--advertise-address=10.89.0.6');
    expect(options.controllers).toEqual([
      ...DEFAULT_CONTROLLERS,
      'deployment-controller',
      'replicaset-controller',
    ]);
  });
});
