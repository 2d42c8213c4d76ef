// The newcomer's scripts (make dev, make demo, make e2e-kind) cannot run end to end in a
// unit test: kind needs Docker, and the demo needs a cluster. What can be checked here is
// checked with real bash: syntax and shellcheck, the argument handling and the clear
// failures, the assertion logic of the e2e (against a stand-in kubectl), the log formatter,
// and the make targets.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { node24, repoRoot, scratchDir } from './scratch.js';

const scratch = scratchDir('lorenz-scripts-');

const SCRIPTS = [
  'hack/demo.sh',
  'hack/dev.sh',
  'hack/e2e-kind.sh',
  'hack/e2e-real-node.sh',
  'hack/images.sh',
  'hack/real-node.sh',
  'hack/dev-cluster.sh',
  'hack/run-ts.sh',
  'hack/lib/docker.sh',
  'hack/lib/samples.sh',
  'hack/lib/local-cluster.sh',
  'hack/lib/node-lock.sh',
  'hack/lib/progress.sh',
  'hack/tools.sh',
  'hack/e2e-local.sh',
  'hack/ensure-sshd.sh',
  'hack/ensure-postgres.sh',
  'hack/ensure-chromium.sh',
  'hack/gitops-health.sh',
  '.ci/run',
  '.ci/vitest-summary',
];

function run(command: string, args: string[], env: Record<string, string> = {}, timeout = 60_000) {
  const result = spawnSync(command, args, {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const onPath = (tool: string) => run('bash', ['-c', `command -v ${tool}`]).status === 0;

describe('shell scripts', () => {
  it.each(SCRIPTS)('%s parses (bash -n)', (script) => {
    expect(run('bash', ['-n', script]).stderr).toBe('');
  });

  // shellcheck comes from Debian (apt-get install -y shellcheck). Where it is installed the
  // scripts must be clean; where it is not, the test says so and checks what it can itself:
  // every runnable script starts with a shebang and stops on the first error.
  it('are shellcheck clean (or, without shellcheck, strict: shebang and set -euo pipefail)', () => {
    if (onPath('shellcheck')) {
      // Following every sourced file takes shellcheck half a minute on a loaded 2-core machine.
      const result = run('shellcheck', ['-x', ...SCRIPTS], {}, 170_000);
      expect(result.stdout + result.stderr).toBe('');
      expect(result.status).toBe(0);
      return;
    }
    console.warn('shellcheck is not installed (apt-get install -y shellcheck): checked less');
    for (const script of SCRIPTS.filter((path) => !path.includes('/lib/'))) {
      const text = readFileSync(join(repoRoot, script), 'utf8');
      expect(text.startsWith('#!/usr/bin/env bash\n'), script).toBe(true);
      expect(text, script).toMatch(/^set -euo pipefail$/m);
    }
  }, 180_000);

  it.each([
    ['hack/demo.sh', ['--help'], 0, /make demo.*fresh clone/s],
    ['hack/demo.sh', ['--bogus'], 2, /usage: hack\/demo\.sh \[--local \| --kind\]/],
    ['hack/dev.sh', ['--help'], 0, /make dev.*Ctrl-C/s],
    ['hack/tools.sh', ['--help'], 0, /stdout carries only the answer.*build-times\.log\)\.\n$/s],
    ['hack/images.sh', ['--help'], 0, /without an image registry.*BASE_IMAGE=/s],
    ['hack/real-node.sh', ['--bogus'], 2, /hack\/real-node\.sh up <dir> <kubeconfig>/],
    ['hack/dev-cluster.sh', ['up', '--node=bogus'], 2, /unknown node kind 'bogus'/],
    [
      'hack/dev-cluster.sh',
      ['up', '--bogus'],
      2,
      /usage: hack\/dev-cluster\.sh up \[--node=real\|process\]/,
    ],
    ['hack/images.sh', ['--bogus'], 2, /usage: hack\/images\.sh \[--print-env \| --help\]/],
    ['hack/run-ts.sh', [], 2, /usage: hack\/run-ts\.sh <entry\.ts>/],
    ['hack/run-ts.sh', ['hack/no-such-file.ts'], 2, /no such file: hack\/no-such-file\.ts/],
  ])('%s %j exits %i with a clear message', (script, args, status, message) => {
    const result = run(script, args);
    expect(result.status).toBe(status);
    expect(result.stdout + result.stderr).toMatch(message);
  });

  it('hack/run-ts.sh runs a TypeScript script with .js imports on Node 24 and cleans up', () => {
    const result = run('hack/run-ts.sh', ['hack/sync-chart.ts', '--check']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(run('bash', ['-c', 'ls hack/.*.run.mjs 2>/dev/null']).stdout).toBe('');
  });
});

/**
 * A directory to use as the whole PATH, holding only `tools` (symlinks to this machine's), so
 * that what a script finds on PATH does not depend on what happens to be installed here.
 */
function pathWithOnly(name: string, tools: string[]): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  for (const tool of tools) {
    const found = run('bash', ['-c', `command -v ${tool}`]).stdout.trim();
    if (!found.startsWith('/')) throw new Error(`${tool} is not on PATH`);
    symlinkSync(found, join(dir, tool));
  }
  return dir;
}

/**
 * Stand-ins for what hack/images.sh runs, each step taking STEP seconds: an engine that
 * answers (images "exist" once built or imported), debootstrap, `npm pack`, `go build` of the
 * pause binary, and `id -u` answering 0 (debootstrap's root check) whoever runs the test.
 */
const IMAGE_STUBS: Record<string, string> = {
  docker: `#!/bin/bash
marker() { echo "$STUB_DIR/images/$(printf '%s' "$1" | tr '/:' '__')"; }
case "$1" in
  info) exit 0 ;;
  image) [ -e "$(marker "$3")" ] ;;
  import) cat >/dev/null; mkdir -p "$STUB_DIR/images"; touch "$(marker "\${@: -1}")" ;;
  build)
    while [ "$1" != -t ]; do shift; done
    echo "Step 1/3 : FROM base"; sleep "$STEP"
    echo " ---> 1234"; echo "Step 2/3 : RUN npm ci --no-audit"; sleep "$STEP"
    echo "added 312 packages"; echo "Step 3/3 : CMD [\\"node\\"]"; sleep "$STEP"
    mkdir -p "$STUB_DIR/images"; touch "$(marker "$2")" ;;
  *) echo "stub docker: unexpected $*" >&2; exit 2 ;;
esac
`,
  debootstrap: `#!/bin/bash
[ "$1" = --version ] && { echo "debootstrap 1.0.128"; exit 0; }
rootfs=$4
echo "I: Retrieving InRelease"; sleep "$STEP"
echo "I: Extracting libc6..."; sleep "$STEP"
mkdir -p "$rootfs/etc/apt/sources.list.d" "$rootfs/var/lib/apt/lists"
`,
  npm: `#!/bin/bash
mkdir -p package && echo '{}' >package/package.json && tar -czf "npm-\${3#npm@}.tgz" package && rm -r package
`,
  go: `#!/bin/bash
[ "$1" = env ] && { echo go1.26.0; exit 0; }
while [ "$1" != -o ]; do shift; done; printf 'pause' >"$2"
`,
  id: `#!/bin/sh
echo 0
`,
};

describe('hack/images.sh progress (stand-ins for docker, debootstrap, npm and go)', () => {
  function images(name: string, step: string, durations?: string) {
    const dir = join(scratch, name);
    const bin = join(dir, 'bin');
    const cache = join(dir, 'cache');
    mkdirSync(bin, { recursive: true });
    mkdirSync(cache, { recursive: true });
    for (const [tool, text] of Object.entries(IMAGE_STUBS)) {
      writeFileSync(join(bin, tool), text, { mode: 0o755 });
    }
    if (durations !== undefined) writeFileSync(join(cache, 'build-times.log'), durations);
    const result = run('hack/images.sh', [], {
      PATH: `${bin}:/usr/bin:/bin`,
      STUB_DIR: dir,
      STEP: step,
      LORENZ_IMAGES_CACHE: cache,
      LORENZ_PROGRESS_INTERVAL: '1',
    });
    return { ...result, durations: () => readFileSync(join(cache, 'build-times.log'), 'utf8') };
  }

  it('says what it builds, the step it is at (the Dockerfile instruction) and for how long', () => {
    const result = images('images-cold', '1.1');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^BASE_IMAGE=lorenz-base:\w+\nOPERATOR_IMAGE=.*\nAGENT_IMAGE=.*\nPAUSE_IMAGE=.*\n$/,
    );
    const lines = result.stderr.split('\n');
    const has = (pattern: RegExp) =>
      expect(
        lines.some((line) => pattern.test(line)),
        `${pattern} in:\n${result.stderr}`,
      ).toBe(true);
    has(/^\[images\] debootstrap --variant=minbase bookworm…$/);
    has(
      /^\[images\] debootstrap --variant=minbase bookworm: I: (Retrieving InRelease|Extracting libc6\.\.\.) \(\d+ s\)$/,
    );
    has(
      /^\[images\] building lorenz-local\/lorenz:\w+ on lorenz-base:\w+: Step \d\/3 : .+ \(\d+ s\)$/,
    );
    // The heartbeat samples once a second: under load it may miss one image's step 2, never
    // all three images' (base, operator, agent run the same stand-in build).
    has(/^\[images\] building lorenz-\S+ .*: Step 2\/3 : RUN npm ci --no-audit \(\d+ s\)$/);
    expect(result.durations()).toMatch(
      /^(\S+Z (debootstrap|lorenz-base|lorenz|lorenz-agent) image \d+s\n){4}$/,
    );
  }, 120_000);

  it('estimates each step from its last duration in the cache', () => {
    const result = images('images-estimate', '0.6', '2026-01-01T00:00:00Z lorenz image 150s\n');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /^\[images\] building lorenz-local\/lorenz:\w+ on lorenz-base:\w+ \(took ~3 min last time\)…$/m,
    );
    expect(result.stderr).toMatch(/: Step \d\/3 : .* \(\d+ s; took ~3 min last time\)$/m);
  }, 120_000);
});

describe('hack/e2e-kind.sh without Docker', () => {
  it('stops at once naming what is missing: the docker command', () => {
    // Up to its docker check the script runs only bash (its shebang is `/usr/bin/env bash`,
    // and env finds bash on PATH), dirname and builtins.
    const result = run('hack/e2e-kind.sh', [], {
      PATH: pathWithOnly('no-docker', ['bash', 'dirname']),
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('docker is not on PATH');
  });

  it('stops at once naming what is missing: a Docker engine that answers', () => {
    const bin = join(scratch, 'no-engine');
    execFileSync('mkdir', ['-p', bin]);
    writeFileSync(join(bin, 'docker'), '#!/bin/sh\necho "Cannot connect" >&2\nexit 1\n');
    chmodSync(join(bin, 'docker'), 0o755);
    const result = run('hack/e2e-kind.sh', [], { PATH: `${bin}:/usr/bin:/bin` });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("the Docker engine does not answer ('docker info' failed)");
  });
});

describe('the e2e assertions (hack/lib/samples.sh) against a stand-in kubectl', () => {
  const HOOKS = ['after_create', 'before_run', 'after_run', 'before_remove'];
  const hookEvents = (hooks: string[]) =>
    hooks
      .flatMap((hook) => [
        `HookStarted ${hook} started in slot 0: echo ${hook}`,
        `HookSucceeded ${hook} completed in slot 0 (exit 0, 3 ms)`,
      ])
      .join('\n');

  /** Runs check_sample with kubectl answering `succeeded` and `events`. */
  function checkSample(succeeded: string, events: string) {
    const script = `
      set -euo pipefail
      ROOT=${JSON.stringify(repoRoot)}
      source "$ROOT/hack/lib/samples.sh"
      kubectl() {
        case "$*" in
          *"get issuerun"*) printf '%s' "$SUCCEEDED" ;;
          *"get events"*) printf '%s\\n' "$EVENTS" ;;
          *describe*) echo "described" ;;
        esac
      }
      check_sample default`;
    return run('bash', ['-c', script], { SUCCEEDED: succeeded, EVENTS: events });
  }

  it('passes a Succeeded run with a HookSucceeded Event for each of the four hooks', () => {
    const result = checkSample('True', hookEvents(HOOKS));
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('fails a run that did not succeed, and describes it', () => {
    const result = checkSample('False', hookEvents(HOOKS));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('issuerun/demo-1 did not succeed (Succeeded=False)');
  });

  it('fails, naming the hook, when a hook has no HookSucceeded Event', () => {
    const events = hookEvents(HOOKS.slice(0, 3)) + '\nHookFailed before_remove failed (exit 1)';
    const result = checkSample('True', events);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('no HookSucceeded Event for before_remove on issuerun/demo-1\n');
  });
});

describe('waiting for the sample (hack/lib/samples.sh) against a stand-in kubectl', () => {
  /**
   * wait_for_sample with kubectl answering, poll after poll, the next of `states`: "absent"
   * (no such IssueRun), else "phase|reason|last hook|its status|turn|Finished".
   */
  function waitForSample(name: string, states: string[], timeout: string) {
    const dir = join(scratch, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'states'), states.join('\n') + '\n');
    writeFileSync(join(dir, 'count'), '0');
    const script = `
      set -euo pipefail
      ROOT=${JSON.stringify(repoRoot)}
      source "$ROOT/hack/lib/samples.sh"
      PROGRESS_PREFIX="[demo]"
      kubectl() {
        local n
        n=$(($(cat "$DIR/count") + 1))
        echo "$n" >"$DIR/count"
        line="$(sed -n "\${n}p" "$DIR/states")"
        [ -n "$line" ] || line="$(tail -n 1 "$DIR/states")"
        [ "$line" != absent ] || { echo 'Error from server (NotFound)' >&2; return 1; }
        printf '%s' "$line"
      }
      wait_for_sample default ${timeout}`;
    return run('bash', ['-c', script], { DIR: dir, LORENZ_PROGRESS_INTERVAL: '1' });
  }

  it('says every interval what the run is at, then that it finished and how', () => {
    const result = waitForSample(
      'sample-finishes',
      // Each state for two polls (about 2 s): a heartbeat a second sees every one.
      [
        'absent',
        '|||||',
        'Running||after_create|completed|0|',
        'Running||before_run|started|0|',
        'Running||before_run|completed|2|',
      ]
        .flatMap((state) => [state, state])
        .concat('Succeeded|Completed|before_remove|completed|3|True'),
      '60s',
    );
    expect(result.status, result.stderr).toBe(0);
    const beats = result.stderr.split('\n').filter(Boolean);
    for (const now of [
      'not created yet',
      'Pending',
      'Running, hook after_create completed',
      'Running, hook before_run running',
      'Running, agent turn 2',
    ]) {
      expect(beats, now).toContainEqual(
        expect.stringMatching(
          new RegExp(`^\\[demo\\] waiting for issuerun/demo-1: ${now} \\(\\d+ s\\)$`),
        ),
      );
    }
    expect(result.stdout).toMatch(
      /^waiting for issuerun\/demo-1 to finish \(timeout 60s\)…\nissuerun\/demo-1 finished after \d+ s: Succeeded \(Completed\), agent turn 3\n$/,
    );
  });

  it('gives up at the timeout saying where the run stands', () => {
    const result = waitForSample('sample-stuck', ['Running||before_run|started|0|'], '2s');
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      '[demo] issuerun/demo-1 has not finished after 2s: Running, hook before_run running\n',
    );
  });

  it('refuses a timeout it cannot read, naming it', () => {
    const result = waitForSample('sample-bad-timeout', ['absent'], 'soon');
    expect(result.status).toBe(2);
    expect(result.stderr).toBe("not a timeout: 'soon' (say 300s, 5m or 300)\n");
  });
});

describe('stopping the demo controller (stop_within in hack/lib/local-cluster.sh)', () => {
  it.each([
    ['exits on SIGTERM', 'exec sleep 30', 5, false],
    ['ignores SIGTERM', "trap '' TERM; while :; do sleep 0.1; done", 1, true],
  ])('a process that %s: the wait ends within the grace (+1 s)', (_, body, grace, killed) => {
    const script = `
      set -euo pipefail
      ROOT=${JSON.stringify(repoRoot)}
      source "$ROOT/hack/lib/local-cluster.sh"
      bash -c ${JSON.stringify(body)} &
      pid=$!
      sleep 0.3
      started=$(date +%s%N)
      stop_within "$pid" ${grace} "the controller" /tmp/controller.log
      echo "took_ms=$((($(date +%s%N) - started) / 1000000))"
      kill -0 "$pid" 2>/dev/null && echo alive || echo gone`;
    const result = run('bash', ['-c', script]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/gone\n$/);
    const took = Number(/took_ms=(\d+)/.exec(result.stdout)?.[1]);
    expect(took).toBeLessThan((grace + 1) * 1000);
    if (killed) expect(took).toBeGreaterThanOrEqual(grace * 1000);
    const pid = /\(pid (\d+)\)/.exec(result.stderr)?.[1] ?? '?';
    expect(result.stderr).toBe(
      `stopping the controller (pid ${pid}): SIGTERM, up to ${grace} s…\n` +
        (killed
          ? `the controller (pid ${pid}) did not exit within ${grace} s of SIGTERM: sent SIGKILL (its log: /tmp/controller.log)\n`
          : ''),
    );
  });
});

describe('where make demo runs (hack/demo.sh)', () => {
  // A Docker engine that answers, as the containers tier leaves one: not a reason to pick kind.
  const dockerAnswers = join(scratch, 'docker-answers');
  mkdirSync(dockerAnswers, { recursive: true });
  writeFileSync(join(dockerAnswers, 'docker'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });

  it.each<[string, string[], Record<string, string>, string]>([
    ['nothing asked', [], {}, 'local'],
    ['CLUSTER=kind', [], { DEMO_CLUSTER: 'kind' }, 'kind'],
    ['CLUSTER=local', [], { DEMO_CLUSTER: 'local' }, 'local'],
    ['--kind', ['--kind'], {}, 'kind'],
    ['--local over CLUSTER=kind', ['--local'], { DEMO_CLUSTER: 'kind' }, 'local'],
  ])('%s: %s', (_, args, env, mode) => {
    const script = `source ${JSON.stringify(join(repoRoot, 'hack/demo.sh'))}; choose_mode "$@"; echo "$mode"`;
    const result = run('bash', ['-c', script, 'demo', ...args], {
      PATH: `${dockerAnswers}:${process.env.PATH ?? ''}`,
      ...env,
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${mode}\n`);
  });

  it('refuses a CLUSTER that is neither, naming it', () => {
    const result = run('hack/demo.sh', [], { DEMO_CLUSTER: 'minikube' });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      "hack/demo.sh: CLUSTER (DEMO_CLUSTER) is local or kind, not 'minikube'\n",
    );
  });

  it('a kind that cannot create its cluster: says why, and how to run the default', () => {
    const bin = join(scratch, 'kind-cannot-pull');
    mkdirSync(bin, { recursive: true });
    const stub = (name: string, text: string) =>
      writeFileSync(join(bin, name), `#!/bin/sh\n${text}\n`, { mode: 0o755 });
    stub('docker', 'exit 0');
    stub('kubectl', 'exit 0');
    stub('helm', 'exit 0');
    stub(
      'kind',
      `case "$1" in
  get) exit 0 ;;
  create) echo 'ERROR: failed to create cluster: failed to pull image "kindest/node:v1.34.0"' >&2; exit 1 ;;
esac`,
    );
    const result = run('hack/demo.sh', ['--kind'], { PATH: `${bin}:/usr/bin:/bin` });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('failed to pull image "kindest/node:v1.34.0"');
    expect(result.stderr).toContain(
      '[e2e-kind] error: kind could not create cluster lorenz-demo (its output is above). kind runs its nodes from the kindest/node image, which it pulls from Docker Hub unless the engine has it already',
    );
    expect(result.stderr).toMatch(
      /\[demo\] the kind cluster could not be set up \(exit 1; why is above\)\.\n\[demo\] the default demo needs neither Docker nor a registry: make demo \(hack\/demo\.sh --local\)\n$/,
    );
  });
});

describe('hack/log-format.mjs', () => {
  it('prints pino JSON records as one readable line each and passes other lines through', () => {
    const input = [
      JSON.stringify({
        level: 30,
        time: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
        pid: 1,
        hostname: 'h',
        msg: 'reconciled',
        run: 'default/demo-1',
        ms: 12,
      }),
      'a line that is not JSON',
      JSON.stringify({
        level: 'error',
        time: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
        msg: 'patch failed',
        err: { message: 'conflict' },
      }),
    ].join('\n');
    const output = execFileSync(node24, ['hack/log-format.mjs'], {
      cwd: repoRoot,
      input,
      encoding: 'utf8',
    });
    expect(output).toBe(
      [
        '03:04:05.006 INFO  reconciled run=default/demo-1 ms=12',
        'a line that is not JSON',
        '03:04:05.006 ERROR patch failed err={"message":"conflict"}',
        '',
      ].join('\n'),
    );
  });
});

describe('make targets', () => {
  it.each([
    ['crds', 'hack/run-ts.sh hack/sync-chart.ts'],
    ['dev', 'hack/dev.sh'],
    ['demo', "DEMO_CLUSTER='local' hack/demo.sh"],
    ['demo CLUSTER=kind', "DEMO_CLUSTER='kind' hack/demo.sh"],
    ['demo KEEP=1', "DEMO_KEEP='1' DEMO_CLUSTER='local' hack/demo.sh"],
    ['docker-build', 'docker build -t ghcr.io/lorenz-dev/lorenz:0.1.0 .'],
    ['helm-lint', 'lint --strict charts/lorenz'],
    ['e2e-kind', 'hack/e2e-kind.sh'],
    ['images', 'hack/images.sh'],
    ['e2e-real-node', 'hack/e2e-real-node.sh'],
  ])('make %s runs %s', (target, command) => {
    const result = run('make', ['-n', ...target.split(' ')]);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(command);
  });
});
