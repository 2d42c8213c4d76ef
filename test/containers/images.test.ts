// The images as built (hack/images.sh) run on a real container runtime: the operator image
// starts as uid 65532 on a read-only root filesystem, and a run Pod's two containers, as the
// pod builder makes them, run on the Docker engine with the Pod's securityContext turned
// into the engine's flags. This is what the process node cannot show: it runs Pods as
// plain processes and enforces no securityContext.
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { DEFAULT_RUN_AS_USER } from '../../src/controller/issuerun/pod-builder.js';
import type { RunInputs } from '../../src/controller/issuerun/inputs.js';
import { INPUT_FILES, RUN_POD_VOLUME_NAMES, RUNNER_FLAGS } from '../../src/api/run-pod.js';
import { securityProbeWorkflow } from './restricted-pod.js';
import {
  docker,
  kubeletVolumes,
  renderRunPod,
  runContainer,
  securityFlags,
} from './pod-on-docker.js';

const images = inject('containerImages');
const unavailable = images.available ? '' : images.reason;
if (unavailable) console.warn(`[containers] skipping the containers tier: ${unavailable}`);
const operator = images.available ? images.operator : '';
const agent = images.available ? images.agent : '';
const pause = images.available ? images.pause : '';

const scratch = mkdtempSync(join(tmpdir(), 'lorenz-containers-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface RunnerLine {
  type?: string;
  message?: { output?: unknown };
}

/** What the hooks printed: `message.output` of the runner's hook_execution JSON lines. */
function hookOutput(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as RunnerLine)
    .filter((record) => record.type === 'hook_execution')
    .flatMap((record) =>
      typeof record.message?.output === 'string' ? [record.message.output] : [],
    );
}

/** The values of `key=value` words the hooks printed. */
const printed = (stdout: string, key: string): string[] =>
  hookOutput(stdout)
    .flatMap((output) => output.split(/\s+/))
    .filter((word) => word.startsWith(`${key}=`))
    .map((word) => word.slice(key.length + 1));

describe.skipIf(unavailable !== '')('the operator image', () => {
  it('runs as uid 65532 by default, and `lorenz --version` on a read-only root filesystem', () => {
    const user = docker(['image', 'inspect', '--format', '{{.Config.User}}', operator]);
    expect(user.stdout.trim()).toBe('65532:65532');
    const version = docker([
      'run',
      '--rm',
      '--network',
      'none',
      '--read-only',
      operator,
      '--version',
    ]);
    expect(version.stderr).toBe('');
    expect(version.stdout.trim()).toMatch(/^lorenz \d+\.\d+\.\d+$/);
    const uid = docker([
      'run',
      '--rm',
      '--network',
      'none',
      '--read-only',
      '--entrypoint',
      'node',
      operator,
      '-e',
      'process.stdout.write(`${process.getuid()}:${process.getgid()}`)',
    ]);
    expect(uid.stdout).toBe('65532:65532');
  });

  /** The operator image, detached, with no network, a read-only root and no capabilities. */
  const startLocked = (name: string, args: string[]) =>
    docker([
      'run',
      '--detach',
      '--name',
      name,
      '--network',
      'none',
      '--read-only',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      operator,
      ...args,
    ]);

  /**
   * The operator image started locked (startLocked) as `name` with `args` for `check`, then
   * removed whatever `check` found.
   */
  const inLockedContainer = (name: string, args: string[], check: () => void) => {
    const started = startLocked(name, args);
    expect(started.status, started.stderr).toBe(0);
    try {
      check();
    } finally {
      docker(['rm', '--force', name]);
    }
  };

  /**
   * `node -e` in the container `name`: fetches `url` until it answers (for 20 s at most, as
   * the process inside is still starting), then `onAnswer` (JavaScript: a function of the
   * Response `r`) writes what the test reads on stdout.
   */
  const fetchInside = (name: string, url: string, onAnswer: string) =>
    docker([
      'exec',
      name,
      'node',
      '-e',
      `const deadline = Date.now() + 20000;
         const once = () => fetch(${JSON.stringify(url)}).then(${onAnswer}, () => {
           if (Date.now() > deadline) process.exit(1); setTimeout(once, 200); });
         once();`,
    ]);

  it('starts the controller on a read-only root filesystem: it answers /healthz', () => {
    const name = `lorenz-containers-controller-${process.pid}`;
    inLockedContainer(name, ['controller'], () => {
      // No cluster to reach: the informers retry, and the health endpoint still answers.
      const probe = fetchInside(
        name,
        'http://127.0.0.1:8081/healthz',
        '(r) => { process.stdout.write(String(r.status)); }',
      );
      expect(probe.stdout, probe.stderr).toBe('200');
    });
  });

  it('serves the web view it carries (lorenz server) on a read-only root filesystem, under its CSP', () => {
    const name = `lorenz-containers-server-${process.pid}`;
    inLockedContainer(name, ['server', '--auth', 'token'], () => {
      // No cluster to reach: the watches retry, and the page itself is still served.
      const probe = fetchInside(
        name,
        'http://127.0.0.1:8090/runs',
        `async (r) => {
           const csp = r.headers.get('content-security-policy') ?? '';
           const page = await r.text();
           process.stdout.write(JSON.stringify({ status: r.status, csp, root: page.includes('<script type="module"') })); }`,
      );
      expect(probe.status, probe.stderr).toBe(0);
      const answer = JSON.parse(probe.stdout) as { status: number; csp: string; root: boolean };
      expect(answer.status).toBe(200);
      expect(answer.csp).toContain("script-src 'self'");
      expect(answer.root).toBe(true);
    });
  });

  it('keeps /lorenz as the build left it: root-owned, not writable by the runtime user', () => {
    const touch = docker([
      'run',
      '--rm',
      '--network',
      'none',
      '--entrypoint',
      'sh',
      operator,
      '-c',
      'stat -c "%u %a %n" /lorenz /lorenz/lorenz.js && touch /lorenz/lorenz.js',
    ]);
    expect(touch.stdout).toMatch(/^0 755 \/lorenz\n0 \d44 \/lorenz\/lorenz\.js\n$/);
    expect(touch.status).not.toBe(0);
    expect(touch.stderr).toMatch(/Permission denied/);
  });
});

// The hooks print what the kernel says about the process they run in.
const WORKFLOW = securityProbeWorkflow({
  afterCreate: 'echo kept > kept.txt',
  beforeRun: `printf 'workspace=%s\\n' "$(cat kept.txt)"`,
});

describe.skipIf(unavailable !== '')('a run Pod on the Docker engine', () => {
  let pod: V1Pod;
  let init: V1Container;
  let agentContainer: V1Container;
  const volumes: Record<string, string> = {};
  let terminationLog = '';

  beforeAll(async () => {
    let inputs: RunInputs;
    ({ pod, inputs } = await renderRunPod({
      workflow: WORKFLOW,
      workflowName: 'runtime',
      run: 'rt-1',
      identifier: 'RT-1',
      title: 'runtime',
      agentImage: agent,
      operatorImage: operator,
    }));
    init = pod.spec!.initContainers![0]!;
    agentContainer = pod.spec!.containers[0]!;
    // As the kubelet lays the volumes out: emptyDirs world-writable, the ConfigMap's files
    // read-only, the downward API file, the termination log a file the container may write.
    Object.assign(volumes, kubeletVolumes(scratch, inputs));
    terminationLog = join(scratch, 'termination-log');
    writeFileSync(terminationLog, '', { mode: 0o666 });
    chmodSync(terminationLog, 0o666);
  });

  it('the Pod asks for what the engine is told: non-root, ALL dropped, no escalation', () => {
    for (const container of [init, agentContainer]) {
      const flags = securityFlags(pod, container).join(' ');
      expect(flags).toContain(`--user ${DEFAULT_RUN_AS_USER}:${DEFAULT_RUN_AS_USER}`);
      expect(flags).toContain('--cap-drop ALL');
      expect(flags).toContain('--security-opt no-new-privileges');
    }
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
  });

  it('the init container copies the runner in under the Pod uid', () => {
    const result = runContainer(pod, init, volumes);
    expect(result.status, result.stderr).toBe(0);
    const copied = readdirSync(volumes[RUN_POD_VOLUME_NAMES.runnerBin]!).sort();
    expect(copied).toEqual([
      'lorenz',
      'lorenz.js',
      'lorenz.snapshot.blob',
      'lorenz.snapshot.key',
      'scripted-agent.mjs',
    ]);
    const launcher = statSync(join(volumes[RUN_POD_VOLUME_NAMES.runnerBin]!, 'lorenz'));
    expect(launcher.uid).toBe(DEFAULT_RUN_AS_USER);
  });

  it('the launcher starts the runner from the V8 snapshot in the agent image (its node fits)', () => {
    const traced = runContainer(
      pod,
      { ...agentContainer, command: ['sh', '-x', '/lorenz-bin/lorenz', 'workflow', 'validate'] },
      volumes,
      [`/lorenz/inputs/${INPUT_FILES.workflow}`],
    );
    expect(traced.status, traced.stderr).toBe(0);
    expect(traced.stderr).toMatch(
      /exec node --max-semi-space-size=1 --snapshot-blob \/lorenz-bin\/lorenz\.snapshot\.blob/,
    );
  });

  it('the agent container runs the runner non-root, with no capabilities', () => {
    const result = runContainer(
      pod,
      agentContainer,
      volumes,
      [`--${RUNNER_FLAGS.noAgent}`],
      ['--volume', `${terminationLog}:/dev/termination-log`],
    );
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(printed(result.stdout, 'uid')).toEqual([String(DEFAULT_RUN_AS_USER)]);
    expect(printed(result.stdout, 'groups')[0]?.split(',')).toContain(String(DEFAULT_RUN_AS_USER));
    // The kernel's word: no effective, permitted or bounding capability; no_new_privs set;
    // the engine's default seccomp filter (2: filter mode) on.
    expect(printed(result.stdout, 'capeff')).toEqual(['0000000000000000']);
    expect(printed(result.stdout, 'capprm')).toEqual(['0000000000000000']);
    expect(printed(result.stdout, 'capbnd')).toEqual(['0000000000000000']);
    expect(printed(result.stdout, 'nonewprivs')).toEqual(['1']);
    expect(printed(result.stdout, 'seccomp')).toEqual(['2']);
    expect(printed(result.stdout, 'rootdir')).toEqual(['refused']);
    expect(printed(result.stdout, 'token')).toEqual(['absent']);
    expect(printed(result.stdout, 'workspace')).toEqual(['kept']);
    // The runner's summary, in the termination message as the kubelet would read it.
    expect(readFileSync(terminationLog, 'utf8')).toMatch(/after_create/);
  });

  it('the same probe sees capabilities when they are not dropped (the check can fail)', () => {
    const probe = docker([
      'run',
      '--rm',
      '--network',
      'none',
      '--user',
      '0:0',
      '--entrypoint',
      'sh',
      agent,
      '-c',
      "awk '/^CapEff:/ { print $2 }' /proc/self/status",
    ]);
    expect(probe.stdout.trim()).toMatch(/^[0-9a-f]{16}$/);
    expect(probe.stdout.trim()).not.toBe('0000000000000000');
  });
});

describe.skipIf(unavailable !== '')("the pause image (the real node's Pod sandbox)", () => {
  it('holds on as a non-root PID 1 and exits 0 at once on SIGTERM', () => {
    const name = `lorenz-containers-pause-${process.pid}`;
    const started = docker(['run', '--detach', '--name', name, '--network', 'none', pause]);
    expect(started.status, started.stderr).toBe(0);
    try {
      const top = docker(['top', name, '-o', 'uid,pid,comm']);
      expect(top.stdout).toMatch(/65535\s+\d+\s+pause/);
      const before = Date.now();
      expect(docker(['stop', '--time', '10', name]).status).toBe(0);
      expect(Date.now() - before).toBeLessThan(5000);
      const exit = docker(['inspect', '--format', '{{.State.ExitCode}}', name]);
      expect(exit.stdout.trim()).toBe('0');
    } finally {
      docker(['rm', '--force', name]);
    }
  });
});
