import { describe, expect, it } from 'vitest';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLocalExecutor } from '../../../src/executor/local.js';
import { writeInput } from '../../support/child-input.js';
import { isAlive, printedPids, quickLoginEnv, useTempDir } from '../../support/workspace.js';

// Pids a hook prints are checked from here: they are this machine's only outside the run's
// PID namespace, whose own behaviour test/unit/executor/escape.test.ts covers.
const executor = createLocalExecutor({ pidNamespace: false });
let dir: string;
let env: NodeJS.ProcessEnv;

useTempDir('lorenz-exec-', 'file', (made) => {
  dir = made;
  env = quickLoginEnv(dir);
});

async function expectAllDead(pids: number[]): Promise<void> {
  expect(pids.length).toBeGreaterThan(0);
  for (const pid of pids) expect(await isAlive(pid)).toBe(false);
}

describe('local executor: runCommand', () => {
  it('runs bash -lc in the cwd and reports the exit code', async () => {
    const result = await executor.runCommand(
      'echo "$PWD"; shopt -q login_shell && echo login; exit 3',
      {
        cwd: dir,
        timeoutMs: 10_000,
      },
    );
    expect(result).toMatchObject({
      exitCode: 3,
      signal: null,
      timedOut: false,
      output: `${dir}\nlogin`,
    });
    expect(result.spawnError).toBeUndefined();
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('merges stdout and stderr in arrival order', async () => {
    const result = await executor.runCommand(
      'for i in 1 2 3; do echo "out$i"; echo "err$i" >&2; done',
      { cwd: dir, timeoutMs: 10_000 },
    );
    expect(result.output).toBe('out1\nerr1\nout2\nerr2\nout3\nerr3');
  });

  it('passes the environment it is given', async () => {
    const result = await executor.runCommand('echo "$LORENZ_TEST_VALUE"', {
      cwd: dir,
      timeoutMs: 10_000,
      env: { ...process.env, LORENZ_TEST_VALUE: 'from-env' },
    });
    expect(result.output).toBe('from-env');
  });

  it('on timeout kills every backgrounded child before returning', async () => {
    const result = await executor.runCommand(
      'sleep 1000 & echo pid:$!; sleep 1000 & echo pid:$!; echo pid:$$; wait',
      // Time for bash to start and print under load (300 ms was not, once: no pid printed).
      { cwd: dir, env, timeoutMs: 2000, killGraceMs: 1000 },
    );
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe('SIGTERM');
    const pids = printedPids(result.output);
    expect(pids).toHaveLength(3);
    await expectAllDead(pids);
  });

  it('SIGKILLs a group that ignores SIGTERM once the grace is over', async () => {
    const started = performance.now();
    const result = await executor.runCommand(
      "trap '' TERM; sleep 1000 & echo pid:$!; echo pid:$$; wait",
      { cwd: dir, env, timeoutMs: 200, killGraceMs: 300 },
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(480);
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    await expectAllDead(printedPids(result.output));
  });

  it('waits for children that keep the output open, up to the timeout', async () => {
    const result = await executor.runCommand('(sleep 0.3; echo late) & echo early', {
      cwd: dir,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, output: 'early\nlate' });
  });

  it('an abort signal kills the group like a timeout, and says it was cancelled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const result = await executor.runCommand('sleep 1000 & echo pid:$!; wait', {
      cwd: dir,
      env,
      timeoutMs: 60_000,
      killGraceMs: 1000,
      signal: controller.signal,
    });
    expect(result).toMatchObject({ timedOut: false, cancelled: true, exitCode: null });
    await expectAllDead(printedPids(result.output));
  });

  it('reports a command that cannot start', async () => {
    const result = await executor.runCommand('true', { cwd: join(dir, 'nope'), timeoutMs: 1000 });
    expect(result.exitCode).toBeNull();
    expect(result.spawnError).toMatch(/^cannot start bash in .*nope: /);
  });
});

describe('local executor: spawn', () => {
  it('pipes stdio and kill() ends the whole group', async () => {
    const child = executor.spawn('sleep 1000 & echo pid:$!; cat', { cwd: dir });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await writeInput(child.stdin, 'hello\n', { end: false });
    await expect.poll(() => output, { timeout: 5000 }).toContain('hello');
    await child.kill(500);
    await expect(child.exited).resolves.toMatchObject({ exitCode: null, signal: 'SIGTERM' });
    await expectAllDead([...printedPids(output), child.pid ?? 0]);
  });

  it('terminates what a launcher leaves behind when it exits', async () => {
    const child = executor.spawn('sleep 1000 & echo pid:$!', { cwd: dir });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await expect(child.exited).resolves.toMatchObject({ exitCode: 0 });
    await expectAllDead(printedPids(output));
  });

  it('shows a start failure on stderr', async () => {
    const child = executor.spawn('true', { cwd: join(dir, 'missing') });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    await child.exited;
    await expect.poll(() => errors).toMatch(/^cannot start bash in /);
  });
});

describe('local executor: filesystem', () => {
  it('ensureDirectory tells a new directory from an existing one', async () => {
    const target = join(dir, 'fs', 'a', 'b');
    expect(await executor.ensureDirectory(target)).toBe(true);
    expect(await executor.ensureDirectory(target)).toBe(false);
  });

  it('pathKind distinguishes every kind without following links', async () => {
    const base = join(dir, 'kinds');
    await mkdir(base);
    await writeFile(join(base, 'file'), 'x');
    await symlink(base, join(base, 'link'));
    const cases: [string, string][] = [
      [base, 'directory'],
      [join(base, 'file'), 'file'],
      [join(base, 'link'), 'symlink'],
      [join(base, 'none'), 'missing'],
      [join(base, 'file', 'under-a-file'), 'missing'],
      ['/dev/null', 'other'],
    ];
    for (const [path, kind] of cases) expect(await executor.pathKind(path)).toBe(kind);
  });

  it('copyTree replaces the target, removeTree removes it, writeFile and realpath work', async () => {
    const from = join(dir, 'copy-src');
    const to = join(dir, 'copy-dst');
    await mkdir(join(from, 'nested'), { recursive: true });
    await writeFile(join(from, 'nested', 'one.txt'), 'one');
    await mkdir(to);
    await executor.writeFile(join(to, 'stale.txt'), 'stale');
    await executor.copyTree(from, to);
    expect(await readFile(join(to, 'nested', 'one.txt'), 'utf8')).toBe('one');
    expect(await executor.pathKind(join(to, 'stale.txt'))).toBe('missing');
    await symlink(to, join(dir, 'copy-link'));
    expect(await executor.realpath(join(dir, 'copy-link'))).toBe(to);
    await executor.removeTree(to);
    expect(await executor.pathKind(to)).toBe('missing');
  });

  it('homeDirectory is HOME', async () => {
    expect(await executor.homeDirectory()).toBe(process.env.HOME);
  });
});
