import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/executor/local.js';
import { quickLoginEnv, useTempDir } from '../../support/workspace.js';

/**
 * A hook that leaves its process group (`setsid cmd &`) must still not outlive the run: the
 * local executor runs hooks in a PID namespace of its own, which `shutdown` takes down.
 * Escaped processes are found from outside by a marker in their command line (a `sleep`
 * duration no other process uses), since pids a hook prints are the namespace's.
 */

let dir: string;
let env: NodeJS.ProcessEnv;
useTempDir('lorenz-escape-', 'file', (made) => {
  dir = made;
  env = quickLoginEnv(dir);
});

const hasPython = spawnSync('python3', ['-c', '0']).status === 0;
const nsenterHasWdns = spawnSync('nsenter', ['--help'], { encoding: 'utf8' }).stdout?.includes(
  '--wdns',
);

/** A `sleep` argument unique to this test run, e.g. 1000.4821. */
const marker = () => `1000.${process.pid}${Math.floor(Math.random() * 1e6)}`;

/** Live processes whose command line is `sleep <mark>`. */
async function sleepers(mark: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline !== `sleep\0${mark}\0`) continue;
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      if (state !== 'Z' && state !== 'X') found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

describe('processes that leave their hook’s group', () => {
  it('live on after the hook (a daemon for the agent) and are gone after shutdown', async () => {
    const executor = createLocalExecutor();
    const [first, second, third] = [marker(), marker(), marker()];
    const result = await executor.runCommand(
      [
        `setsid sleep ${first} >/dev/null 2>&1 &`,
        `nohup setsid sleep ${second} >/dev/null 2>&1 &`,
        `(setsid sh -c 'sleep ${third}' </dev/null >/dev/null 2>&1 &)`,
        'echo started',
      ].join('\n'),
      { cwd: dir, env, timeoutMs: 10_000 },
    );
    expect(result).toMatchObject({ exitCode: 0, output: 'started' });
    await expect.poll(async () => (await sleepers(second)).length).toBe(1);
    expect(await sleepers(first)).toHaveLength(1);
    await executor.shutdown(500);
    for (const mark of [first, second, third]) expect(await sleepers(mark)).toEqual([]);
  });

  it('are gone after shutdown when their hook timed out', async () => {
    const executor = createLocalExecutor();
    const mark = marker();
    const result = await executor.runCommand(`setsid sleep ${mark} >/dev/null 2>&1 & sleep 1000`, {
      cwd: dir,
      env,
      timeoutMs: 300,
      killGraceMs: 300,
    });
    expect(result.timedOut).toBe(true);
    await executor.shutdown(300);
    expect(await sleepers(mark)).toEqual([]);
  });

  it('one that ignores SIGTERM is killed once the grace is over', async () => {
    const executor = createLocalExecutor();
    const mark = marker();
    await executor.runCommand(`setsid sh -c "trap '' TERM; sleep ${mark}" >/dev/null 2>&1 &`, {
      cwd: dir,
      env,
      timeoutMs: 10_000,
    });
    await expect.poll(async () => (await sleepers(mark)).length).toBe(1);
    const started = performance.now();
    await executor.shutdown(300);
    expect(await sleepers(mark)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe('hooks in the namespace keep their semantics', () => {
  it('cwd, uid, environment, exit code and merged output are as without it', async () => {
    const executor = createLocalExecutor();
    const result = await executor.runCommand(
      'echo "$PWD $(pwd -P) $(id -u) $LORENZ_TEST_VALUE"; echo err >&2; exit 7',
      { cwd: dir, env: { ...env, LORENZ_TEST_VALUE: 'v' }, timeoutMs: 10_000 },
    );
    expect(result).toMatchObject({
      exitCode: 7,
      output: `${dir} ${dir} ${process.getuid?.()} v\nerr`,
    });
    await executor.shutdown(100);
  });

  // Entered with `--wd`, the cwd stayed outside the namespace's tree: getcwd(2) answered
  // `(unreachable)/…` and libc walked every directory up to / to find the path, in sh, in
  // bash and in each program that asked (≈ 6 ms a hook). The raw system call tells; python3
  // is how a hook can make it, so the test needs one (and an nsenter with --wdns).
  it.skipIf(!hasPython || !nsenterHasWdns)(
    'its cwd is inside the namespace: getcwd(2) names it',
    async () => {
      const executor = createLocalExecutor();
      const result = await executor.runCommand(
        `python3 -c 'import ctypes; b = ctypes.create_string_buffer(4096); ctypes.CDLL(None).syscall(79, b, 4096); print(b.value.decode())'`,
        { cwd: dir, env, timeoutMs: 10_000 },
      );
      expect(result).toMatchObject({ exitCode: 0, output: dir });
      await executor.shutdown(100);
    },
  );

  it('`$!` and `ps` agree inside a hook, and a timeout still kills the group', async () => {
    const executor = createLocalExecutor();
    const mark = marker();
    const result = await executor.runCommand(
      `sleep ${mark} & kill -0 $! && test -d /proc/$! && echo same; wait`,
      { cwd: dir, env, timeoutMs: 300, killGraceMs: 300 },
    );
    expect(result).toMatchObject({ timedOut: true, output: 'same' });
    expect(await sleepers(mark)).toEqual([]);
    await executor.shutdown(100);
  });

  it('a later hook runs in the same namespace and can stop what an earlier one left', async () => {
    const executor = createLocalExecutor();
    const mark = marker();
    await executor.runCommand(
      `setsid sleep ${mark} >/dev/null 2>&1 & echo $! > ${join(dir, 'pid')}`,
      {
        cwd: dir,
        env,
        timeoutMs: 10_000,
      },
    );
    const stop = await executor.runCommand(`kill "$(cat pid)"`, {
      cwd: dir,
      env,
      timeoutMs: 10_000,
    });
    expect(stop.exitCode).toBe(0);
    await expect.poll(async () => (await sleepers(mark)).length).toBe(0);
    await executor.shutdown(100);
  });
});
