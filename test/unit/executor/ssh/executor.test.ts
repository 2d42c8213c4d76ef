// The SSH executor against a real OpenSSH server on loopback (test/support/fakes/sshd.ts):
// commands, process groups, the canonicalize guard, file operations, and every way the
// connection can fail.
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLorenzError } from '../../../../src/workflow/errors.js';
import { startSshd, type Sshd } from '../../../support/fakes/sshd.js';
import { eventually, marker, markedProcesses, pidsOf, sshExecutor } from './support.js';

let sshd: Sshd;
beforeAll(async () => {
  sshd = await startSshd();
}, 60_000);
afterAll(async () => {
  await sshd?.stop();
});

/** Runs `body` with a fresh executor and a fresh process marker; shuts the executor down after. */
async function withExecutor(
  body: (executor: Awaited<ReturnType<typeof sshExecutor>>, mark: string) => Promise<void>,
): Promise<void> {
  const executor = await sshExecutor(sshd);
  const mark = marker();
  try {
    await body(executor, mark);
  } finally {
    await executor.shutdown();
  }
}

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isLorenzError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a failure');
}

describe('SSH executor: commands', () => {
  it('runs bash -lc in the cwd on the worker, output merged, exit status kept', async () => {
    const executor = await sshExecutor(sshd);
    try {
      const result = await executor.runCommand(
        'echo "$PWD $(id -un)"; echo err >&2; shopt -q login_shell && echo login; exit 3',
        { cwd: sshd.home, timeoutMs: 10_000 },
      );
      expect(result).toMatchObject({
        exitCode: 3,
        signal: null,
        timedOut: false,
        output: `${sshd.home} ${sshd.user}\nerr\nlogin`,
      });
      expect(await executor.homeDirectory()).toBe(sshd.home);
    } finally {
      await executor.shutdown();
    }
  });

  it("ships only what Lorenz adds to its environment, PATH as a prefix of the worker's", async () => {
    const executor = await sshExecutor(sshd);
    try {
      const env = {
        ...process.env,
        LORENZ_AGENT_VAR: 'from the workflow',
        PATH: `/opt/lorenz-bin:${process.env.PATH ?? ''}`,
        HOME: '/root',
      };
      process.env.LORENZ_ORCHESTRATOR_SECRET ??= 'never shipped';
      const result = await executor.runCommand(
        'echo "$LORENZ_AGENT_VAR|${LORENZ_ORCHESTRATOR_SECRET-unset}|$HOME"; echo "$PATH"',
        { cwd: sshd.home, timeoutMs: 10_000, env: { ...env, ...process.env, ...env } },
      );
      const [line, path] = result.output.split('\n');
      expect(line).toBe(`from the workflow|unset|${sshd.home}`);
      expect(path?.startsWith('/opt/lorenz-bin:')).toBe(true);
      expect(path).toContain('/usr/bin');
    } finally {
      await executor.shutdown();
    }
  });

  it('keeps the first characters of a large output and counts the rest', async () => {
    const executor = await sshExecutor(sshd);
    try {
      const result = await executor.runCommand('head -c 100000 /dev/zero | tr "\\0" x', {
        cwd: sshd.home,
        timeoutMs: 10_000,
        outputLimit: 4096,
      });
      expect(result.output).toBe('x'.repeat(4096));
      expect(result.outputDropped).toBe(100_000 - 4096);
    } finally {
      await executor.shutdown();
    }
  });

  it('times out a hook that ignores SIGTERM and forks: nothing of it is left on the host', async () => {
    await withExecutor(async (executor, mark) => {
      const started = Date.now();
      const result = await executor.runCommand(
        `trap '' TERM; (trap '' TERM; sleep ${mark}) & (sleep ${mark}) & sleep ${mark}`,
        { cwd: sshd.home, timeoutMs: 500, killGraceMs: 300 },
      );
      expect(result).toMatchObject({ timedOut: true, exitCode: null, cancelled: false });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(await sshd.processes(`sleep ${mark}`)).toEqual([]);
    });
  });

  it('a cancellation kills the remote group like a timeout', async () => {
    await withExecutor(async (executor, mark) => {
      const abort = new AbortController();
      setTimeout(() => abort.abort(), 300);
      const result = await executor.runCommand(`sleep ${mark} & sleep ${mark}`, {
        cwd: sshd.home,
        timeoutMs: 60_000,
        signal: abort.signal,
      });
      expect(result).toMatchObject({ cancelled: true, timedOut: false });
      expect(await sshd.processes(`sleep ${mark}`)).toEqual([]);
    });
  });

  it('shutdown ends the daemons hooks left behind', async () => {
    const executor = await sshExecutor(sshd);
    const mark = marker();
    const result = await executor.runCommand(`(sleep ${mark} >/dev/null 2>&1 &); true`, {
      cwd: sshd.home,
      timeoutMs: 10_000,
    });
    expect(result.exitCode).toBe(0);
    // Left its group with a subshell, but not its session: still this hook's group.
    expect(await sshd.processes(`sleep ${mark}`)).toHaveLength(1);
    await executor.shutdown(500);
    expect(await eventually(async () => (await sshd.processes(`sleep ${mark}`)).length === 0)).toBe(
      true,
    );
  });

  it('spawn pipes stdio over the channel and kill() ends the remote group', async () => {
    await withExecutor(async (executor, mark) => {
      const child = executor.spawn(`sleep ${mark} & cat`, { cwd: sshd.home });
      const chunks: string[] = [];
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
      child.stdin.write('hello over ssh\n');
      expect(await eventually(async () => chunks.join('') === 'hello over ssh\n')).toBe(true);
      await child.kill(300);
      expect(await sshd.processes(`sleep ${mark}`)).toEqual([]);
    });
  });

  it('long-lived channels (bridges) never starve short ones of the connection', async () => {
    await withExecutor(async (executor, mark) => {
      const bridges = Array.from({ length: 8 }, () =>
        executor.spawn(`sleep ${mark} & cat`, { cwd: sshd.home }),
      );
      expect(
        await eventually(
          async () =>
            (await sshd.processes(`sleep ${mark}`)).filter((line) => line.startsWith('sleep'))
              .length === 8,
        ),
      ).toBe(true);
      const result = await executor.runCommand('echo still', { cwd: sshd.home, timeoutMs: 10_000 });
      expect(result.output).toBe('still');
      await Promise.all(bridges.map((bridge) => bridge.kill(300)));
      expect(await sshd.processes(`sleep ${mark}`)).toEqual([]);
    });
  });

  it('a command whose cwd is missing fails to start, as locally', async () => {
    const executor = await sshExecutor(sshd);
    try {
      const result = await executor.runCommand('true', {
        cwd: `${sshd.home}/no-such-dir`,
        timeoutMs: 10_000,
      });
      expect(result.spawnError).toContain('no such directory');
    } finally {
      await executor.shutdown();
    }
  });
});

// Daemons that left the hook's process group (and its session): no group signal reaches
// them; the run's marker in their environment does (src/executor/ssh/run-marker.ts).
describe("SSH executor: what left the hook's group ends with the run", () => {
  const gone = (mark: string) => async () => (await pidsOf(sshd, `sleep ${mark}`)).length === 0;

  // A daemon that keeps the hook's stdout holds its channel open, as it holds the pipe of a
  // local hook: the hook then times out (its group is ended), and the daemon is still there.
  it.each([
    ['setsid, no redirections', (mark: string) => `setsid sleep ${mark} &`, true],
    [
      'setsid, its own stdio',
      (mark: string) => `setsid sleep ${mark} </dev/null >/dev/null 2>&1 &`,
      false,
    ],
    [
      'a double fork into a new session',
      (mark: string) => `( setsid sh -c 'sleep ${mark} &' & )`,
      true,
    ],
    [
      'a daemon that ignores SIGTERM',
      (mark: string) => `setsid sh -c "trap '' TERM; sleep ${mark}; true" >/dev/null 2>&1 &`,
      false,
    ],
  ])('%s', async (_name, hook, holdsOutput) => {
    const executor = await sshExecutor(sshd);
    const mark = marker();
    const result = await executor.runCommand(hook(mark), {
      cwd: sshd.home,
      timeoutMs: 1000,
      killGraceMs: 200,
    });
    expect(result).toMatchObject({ exitCode: holdsOutput ? null : 0, timedOut: holdsOutput });
    // A hook that backgrounds its daemon may end before the daemon has started its sleep
    // (under load, setsid and sh take a while): wait for it to appear.
    let pid: number | undefined;
    const appeared = await eventually(async () => {
      [pid] = await pidsOf(sshd, `sleep ${mark}`);
      return pid !== undefined;
    });
    // It outlived its hook's group, and carries the run's marker.
    expect(appeared).toBe(true);
    expect(await markedProcesses(executor.runMarker)).toContain(pid);
    await executor.shutdown(300);
    expect(await eventually(gone(mark))).toBe(true);
    expect(await markedProcesses(executor.runMarker)).toEqual([]);
  });

  it("leaves another run's daemons alone (a different marker)", async () => {
    const [first, second] = [await sshExecutor(sshd), await sshExecutor(sshd)];
    const [mine, theirs] = [marker(), marker()];
    try {
      expect(first.runMarker).not.toBe(second.runMarker);
      await first.runCommand(`setsid sleep ${mine} >/dev/null 2>&1 &`, {
        cwd: sshd.home,
        timeoutMs: 10_000,
      });
      await second.runCommand(`setsid sleep ${theirs} >/dev/null 2>&1 &`, {
        cwd: sshd.home,
        timeoutMs: 10_000,
      });
      await first.shutdown(300);
      expect(await eventually(gone(mine))).toBe(true);
      expect(await pidsOf(sshd, `sleep ${theirs}`)).toHaveLength(1);
      expect(await markedProcesses(second.runMarker)).toHaveLength(1);
    } finally {
      await second.shutdown(300);
    }
    expect(await eventually(gone(theirs))).toBe(true);
  });

  it("the bridge's stray children end with the run too", async () => {
    const executor = await sshExecutor(sshd);
    const mark = marker();
    const child = executor.spawn(`setsid sleep ${mark} >/dev/null 2>&1 & cat`, { cwd: sshd.home });
    expect(await eventually(async () => (await pidsOf(sshd, `sleep ${mark}`)).length === 1)).toBe(
      true,
    );
    await child.kill(300);
    await executor.shutdown(300);
    expect(await eventually(gone(mark))).toBe(true);
  });

  // The documented limit (docs/ssh-workers.md): what starts with a cleared environment does
  // not carry the marker, so nothing finds it. Ended here by its pid.
  it('a daemon started with a cleared environment (env -i) is not found', async () => {
    const executor = await sshExecutor(sshd);
    const mark = marker();
    await executor.runCommand(`setsid env -i sleep ${mark} >/dev/null 2>&1 &`, {
      cwd: sshd.home,
      timeoutMs: 10_000,
    });
    expect(await eventually(async () => (await pidsOf(sshd, `sleep ${mark}`)).length === 1)).toBe(
      true,
    );
    await executor.shutdown(300);
    const left = await pidsOf(sshd, `sleep ${mark}`);
    try {
      expect(left).toHaveLength(1);
    } finally {
      for (const pid of left) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('SSH executor: the canonicalize guard in the hook shell', () => {
  it('refuses a symlinked root, a symlinked component and the root itself', async () => {
    const executor = await sshExecutor(sshd);
    const base = `${sshd.home}/guard-${marker()}`;
    try {
      await sshd.asWorker(
        `mkdir -p ${base}/root/ok ${base}/outside && ln -s ${base}/root ${base}/linked-root && ` +
          `ln -s ${base}/outside ${base}/root/escape`,
      );
      const run = (root: string, cwd: string) =>
        executor.runCommand('pwd -P', { cwd, root, timeoutMs: 10_000 });
      expect((await run(`${base}/root`, `${base}/root/ok`)).output).toBe(`${base}/root/ok`);
      expect(await failure(run(`${base}/linked-root`, `${base}/linked-root/ok`))).toEqual({
        code: 'workspace_unsafe_symlink',
        message: `unsafe symlink in workspace path: ${base}/linked-root`,
      });
      expect(await failure(run(`${base}/root`, `${base}/root/escape`))).toEqual({
        code: 'workspace_unsafe_symlink',
        message: `unsafe symlink in workspace path: ${base}/root/escape`,
      });
      expect(await failure(run(`${base}/root`, `${base}/root/ok/..`))).toMatchObject({
        code: 'workspace_outside_root',
      });
      expect(await failure(run(`${base}/root`, `${base}/other`))).toEqual({
        code: 'workspace_outside_root',
        message: `workspace outside root: ${base}/other`,
      });
      expect(await failure(run(`${base}/root`, `${base}/root/.`))).toEqual({
        code: 'workspace_is_root',
        message: 'refusing to use workspace root as cwd',
      });
    } finally {
      await sshd.asWorker(`rm -rf ${base}`);
      await executor.shutdown();
    }
  });
});

describe('SSH executor: files', () => {
  it('writes with a mode, reads, probes and removes on the worker', async () => {
    const executor = await sshExecutor(sshd);
    const dir = `${sshd.home}/files-${marker()}`;
    try {
      expect(await executor.ensureDirectory(`${dir}/a/b`)).toBe(true);
      expect(await executor.ensureDirectory(`${dir}/a/b`)).toBe(false);
      await executor.writeFile(`${dir}/a/run.sh`, '#!/bin/sh\necho ran\n', { mode: 0o755 });
      await executor.writeFile(`${dir}/a/secret`, 'token\n', { mode: 0o600 });
      expect(
        await sshd.asWorker(`stat -c %a ${dir}/a/run.sh ${dir}/a/secret; ${dir}/a/run.sh`),
      ).toBe('755\n600\nran\n');
      expect(await executor.readFile(`${dir}/a/secret`)).toBe('token\n');
      expect(await executor.readFile(`${dir}/a/none`)).toBeNull();
      await sshd.asWorker(`ln -s ${dir}/a/secret ${dir}/a/link`);
      expect(await executor.readFile(`${dir}/a/link`)).toBeNull();
      expect(await executor.pathKind(`${dir}/a/link`)).toBe('symlink');
      expect(await executor.pathKind(`${dir}/a`)).toBe('directory');
      expect(await executor.pathKind(`${dir}/a/secret`)).toBe('file');
      expect(await executor.pathKind(`${dir}/a/secret/x`)).toBe('missing');
      expect(await executor.realpath(`${dir}/a/link`)).toBe(`${dir}/a/secret`);
      await expect(executor.realpath(`${dir}/none`)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(await executor.removeEmptyDirectory(`${dir}/a`)).toBe(false);
      expect(await executor.removeEmptyDirectory(`${dir}/a/b`)).toBe(true);
      await executor.removeTree(dir);
      expect(await executor.pathKind(dir)).toBe('missing');
    } finally {
      await executor.shutdown();
    }
  });
});

describe('SSH executor: copyTree', () => {
  it('refuses a symlinked parent or target before extracting anything', async () => {
    const executor = await sshExecutor(sshd);
    const base = `${sshd.home}/copy-${marker()}`;
    const source = await mkdtemp(join(tmpdir(), 'lorenz-copy-'));
    await writeFile(join(source, 'big.bin'), Buffer.alloc(8 * 1024 * 1024, 1));
    try {
      await sshd.asWorker(
        `mkdir -p ${base}/ws/.lorenz ${base}/outside && ln -s ${base}/outside ${base}/ws/.lorenz/skills && ` +
          `mkdir -p ${base}/ws2/.lorenz/skills && ln -s ${base}/outside ${base}/ws2/.lorenz/skills/s`,
      );
      expect(
        await failure(
          executor.copyTree(source, `${base}/ws/.lorenz/skills/s`, { within: `${base}/ws` }),
        ),
      ).toEqual({
        code: 'workspace_unsafe_symlink',
        message: `unsafe symlink in workspace path: ${base}/ws/.lorenz/skills`,
      });
      expect(
        await failure(
          executor.copyTree(source, `${base}/ws2/.lorenz/skills/s`, { within: `${base}/ws2` }),
        ),
      ).toEqual({
        code: 'workspace_unsafe_symlink',
        message: `unsafe symlink in workspace path: ${base}/ws2/.lorenz/skills/s`,
      });
      expect(await sshd.asWorker(`ls -A ${base}/outside`)).toBe('');
      await executor.copyTree(source, `${base}/ws2/.lorenz/new`, { within: `${base}/ws2` });
      expect(await sshd.asWorker(`stat -c %s ${base}/ws2/.lorenz/new/big.bin`)).toBe('8388608\n');
    } finally {
      await rm(source, { recursive: true, force: true });
      await sshd.asWorker(`rm -rf ${base}`);
      await executor.shutdown();
    }
  });
});

describe('SSH executor: connection failures', () => {
  it('a key the host does not accept', async () => {
    const executor = await sshExecutor(sshd, { keyFile: sshd.wrongKeyFile });
    expect(await failure(executor.connect())).toMatchObject({
      code: 'ssh_connect',
      message: expect.stringContaining('the key was refused') as string,
    });
  });

  it('a host key that is not the known one, and a host not in known_hosts at all', async () => {
    const changed = await sshExecutor(sshd, { knownHosts: sshd.wrongKnownHosts });
    expect(await failure(changed.connect())).toMatchObject({
      code: 'ssh_connect',
      message: expect.stringContaining('does not match known_hosts') as string,
    });
    const unknown = await sshExecutor(sshd, { knownHosts: '# nothing\n' });
    const result = await failure(unknown.runCommand('true', { cwd: '/', timeoutMs: 5000 }));
    expect(result).toMatchObject({
      code: 'ssh_connect',
      message: expect.stringContaining('has no entry in known_hosts') as string,
    });
  });

  it('accepts a hashed known_hosts entry for [host]:port', async () => {
    const salt = randomBytes(20);
    const name = `[${sshd.host}]:${sshd.port}`;
    const hash = createHmac('sha1', salt).update(name).digest('base64');
    const key = sshd.knownHosts.trim().split(/\s+/).slice(1).join(' ');
    const executor = await sshExecutor(sshd, {
      knownHosts: `|1|${salt.toString('base64')}|${hash} ${key}\n`,
    });
    await executor.connect();
    await executor.shutdown();
  });

  it('a host that is down', async () => {
    const executor = await sshExecutor(sshd, { port: 1 });
    expect(await failure(executor.connect())).toMatchObject({
      code: 'ssh_connect',
      message: expect.stringContaining('connection refused') as string,
    });
  });

  it('a connection cut mid-command: a clear failure, and the group ended on reconnection', async () => {
    await withExecutor(async (executor, mark) => {
      const running = executor.runCommand(`trap '' TERM HUP PIPE; sleep ${mark}`, {
        cwd: sshd.home,
        timeoutMs: 60_000,
        killGraceMs: 300,
      });
      expect(await eventually(async () => (await sshd.processes(`sleep ${mark}`)).length > 0)).toBe(
        true,
      );
      expect(await sshd.cutSessions()).toBeGreaterThan(0);
      expect(await failure(running)).toMatchObject({
        code: 'ssh_connect',
        message: expect.stringContaining('lost') as string,
      });
      // The next use reconnects and ends what the drop left running first.
      const next = await executor.runCommand('echo back', { cwd: sshd.home, timeoutMs: 10_000 });
      expect(next.output).toBe('back');
      expect(await sshd.processes(`sleep ${mark}`)).toEqual([]);
    });
  });
});
