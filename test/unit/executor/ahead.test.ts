import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/executor/local.js';
import type { CommandResult, Executor } from '../../../src/executor/types.js';
import { makeTempDir, quickLoginEnv, removeTempDir } from '../../support/workspace.js';

/**
 * Commands whose process was started ahead (`commandsAhead`, src/executor/standby.ts) behave
 * as commands spawned at the call: the same output, status, directory and environment, in a
 * PID namespace and without one. That the process really was started ahead is seen from the
 * process itself: it began before the call.
 */

let dir: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  dir = await makeTempDir('lorenz-ahead-');
  await mkdir(join(dir, 'work space'));
  env = { ...quickLoginEnv(dir), OLDPWD: '/somewhere/before' };
});
afterAll(async () => {
  await removeTempDir(dir);
});

const namespaces = spawnSync('unshare', ['--map-current-user', '--pid', '--fork', 'true']);
const modes = [
  { name: 'without a PID namespace', pidNamespace: false },
  ...(namespaces.status === 0 ? [{ name: 'in the run’s PID namespace', pidNamespace: true }] : []),
];

/** What a caller sees of a result, durations aside. */
const seen = (result: CommandResult) => ({
  exitCode: result.exitCode,
  signal: result.signal,
  output: result.output,
  timedOut: result.timedOut,
  spawnError: result.spawnError,
});

const SAME_AS_SPAWNED: [string, string][] = [
  [
    'a login bash, in the directory by its path',
    'shopt -q login_shell && echo login; pwd; /bin/pwd',
  ],
  ['the environment, PWD and OLDPWD as given', 'echo "$HOME|$PWD|${OLDPWD-unset}"'],
  ['stdout and stderr merged in order', 'for i in 1 2; do echo "out$i"; echo "err$i" >&2; done'],
  ['the exit status', 'echo bye; exit 7'],
  ['no stdin and no extra descriptor', 'cat; [ -e /dev/fd/3 ] && echo fd3 || echo no-fd3'],
  ['quotes, newlines and $ in the command', "printf '%s\\n' 'a b' \"it's\" '$HOME' \\\n  end"],
];

/** When this machine booted, in seconds since the epoch (for /proc/<pid>/stat start times). */
const bootTime = () =>
  Date.now() / 1000 - Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
/** Prints when the command's own process started: seconds since boot. */
const PRINT_START = 'echo "start:$(($(cut -d" " -f22 /proc/$$/stat) * 10))ms"';
const startedMs = (output: string) => Number(/start:(\d+)ms/.exec(output)?.[1]);

/** Parent pids, by /proc/<pid>/stat. */
async function parentOf(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/**
 * The `sh` of this process's waiting standbys: its children, or its children's (nsenter's)
 * children in a PID namespace. Other test files' standbys are not this process's.
 */
async function standbys(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmdline.startsWith('/bin/sh\0-c\0p=$(cat <&3)')) continue;
      const parent = await parentOf(Number(entry));
      if (parent === process.pid || (parent !== null && (await parentOf(parent)) === process.pid))
        found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

describe.each(modes)('commands started ahead, $name', ({ pidNamespace }) => {
  let plain: Executor;
  let ahead: Executor;
  beforeAll(() => {
    plain = createLocalExecutor({ pidNamespace });
    ahead = createLocalExecutor({ pidNamespace, commandsAhead: { env } });
  });
  afterAll(async () => {
    await plain.shutdown(500);
    await ahead.shutdown(500);
  });

  it.each(SAME_AS_SPAWNED)('%s, as a command spawned at the call', async (_, command) => {
    const cwd = join(dir, 'work space');
    const options = { cwd, env, timeoutMs: 10_000 };
    const expected = seen(await plain.runCommand(command, options));
    expect(seen(await ahead.runCommand(command, options))).toEqual(expected);
    // Twice: the first started the next one's process, which the second took.
    expect(seen(await ahead.runCommand(command, options))).toEqual(expected);
    expect(expected.exitCode).not.toBeNull();
  });

  it('the command’s process began before the call: it was started ahead', async () => {
    await ahead.runCommand('true', { cwd: dir, env, timeoutMs: 10_000 });
    await sleep(300); // the next one is long started by now
    const called = (Date.now() / 1000 - bootTime()) * 1000;
    const result = await ahead.runCommand(PRINT_START, { cwd: dir, env, timeoutMs: 10_000 });
    expect(called - startedMs(result.output)).toBeGreaterThan(200);
    // A plain executor's command starts after the call (10 ms ticks).
    const plainCalled = (Date.now() / 1000 - bootTime()) * 1000;
    const spawned = await plain.runCommand(PRINT_START, { cwd: dir, env, timeoutMs: 10_000 });
    expect(startedMs(spawned.output)).toBeGreaterThanOrEqual(plainCalled - 20);
  });

  it('a command with another environment, a missing directory, a NUL byte or too long is spawned as before', async () => {
    const other = await ahead.runCommand('echo "$LORENZ_TEST_VALUE"', {
      cwd: dir,
      env: { ...env, LORENZ_TEST_VALUE: 'other' },
      timeoutMs: 10_000,
    });
    expect(other).toMatchObject({ exitCode: 0, output: 'other' });
    const missing = await ahead.runCommand('true', {
      cwd: join(dir, 'nope'),
      env,
      timeoutMs: 1000,
    });
    expect(missing.spawnError).toMatch(/^cannot start bash in .*nope: /);
    // A NUL byte cannot be in an argument: refused, not run without it.
    const nul = await ahead.runCommand('echo a\0b', { cwd: dir, env, timeoutMs: 1000 });
    expect(nul).toMatchObject({ exitCode: null, output: '' });
    expect(nul.spawnError).toMatch(/null bytes/);
    const huge = `: ${'x'.repeat(200_000)}`;
    const tooLong = seen(await ahead.runCommand(huge, { cwd: dir, env, timeoutMs: 5000 }));
    expect(tooLong).toEqual(seen(await plain.runCommand(huge, { cwd: dir, env, timeoutMs: 5000 })));
    expect(tooLong.spawnError).toMatch(/E2BIG/);
    // The standby those two left alone still serves the next command.
    expect(await ahead.runCommand('echo ok', { cwd: dir, env, timeoutMs: 10_000 })).toMatchObject({
      exitCode: 0,
      output: 'ok',
    });
  });

  it('a command whose waiting process was killed runs afresh, not failed', async () => {
    // The next command's process waits beside this one, as the standby script's `sh`.
    const killed = await ahead.runCommand(
      `sleep 0.2; pkill -KILL -P "$PPID" -f '[c]at <&3[)]'; echo killed`,
      { cwd: dir, env, timeoutMs: 10_000 },
    );
    expect(killed).toMatchObject({ exitCode: 0, output: 'killed' });
    const next = await ahead.runCommand('echo "after $PWD"', { cwd: dir, env, timeoutMs: 10_000 });
    expect(next).toMatchObject({ exitCode: 0, output: `after ${dir}`, signal: null });
  });

  it('a process killed just before the call, its exit not yet seen, is replaced', async () => {
    await ahead.runCommand('true', { cwd: dir, env, timeoutMs: 10_000 });
    await sleep(200);
    const [waiting] = await standbys();
    expect(waiting).toBeDefined();
    // No await between the kill and the call: this process cannot have seen it exit.
    process.kill(waiting ?? 0, 'SIGKILL');
    const result = await ahead.runCommand('echo fresh', { cwd: dir, env, timeoutMs: 10_000 });
    expect(result).toMatchObject({ exitCode: 0, signal: null, output: 'fresh' });
  });

  it('a timeout still kills the command’s whole group', async () => {
    const result = await ahead.runCommand('sleep 1000 & echo "child $!"; wait', {
      cwd: dir,
      env,
      timeoutMs: 300,
      killGraceMs: 500,
    });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGTERM' });
  });
});

describe('the waiting process at shutdown', () => {
  it('is ended, quickly, and nothing of it is left', async () => {
    const executor = createLocalExecutor({ pidNamespace: false, commandsAhead: { env } });
    await executor.runCommand('true', { cwd: dir, env, timeoutMs: 10_000 });
    await sleep(100);
    expect((await standbys()).length).toBe(1);
    const started = performance.now();
    await executor.shutdown(5000);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await standbys()).toEqual([]);
  });

  it('is not started before the first command, nor for a command that is the last', async () => {
    const executor = createLocalExecutor({ pidNamespace: false, commandsAhead: { env } });
    await sleep(100);
    expect(await standbys()).toEqual([]);
    await executor.runCommand('true', { cwd: dir, env, timeoutMs: 10_000, last: true });
    await sleep(100);
    expect(await standbys()).toEqual([]);
    await executor.shutdown(500);
  });
});
