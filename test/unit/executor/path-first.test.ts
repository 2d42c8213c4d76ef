// `pathFirst`: directories Lorenz puts first on a command's PATH (the git guard's wrapper)
// survive the login profile, which every command runs after (`bash -lc`): Debian's
// /etc/profile and a user's ~/.bash_profile both set PATH outright. Through each way an
// executor starts a command: a fresh spawn, a process started ahead (standby.ts), a
// long-lived bridge (spawn), on this machine and on an SSH worker.
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/executor/local.js';
import type { Executor } from '../../../src/executor/types.js';
import { startSshd, type Sshd } from '../../support/fakes/sshd.js';
import { sshExecutor } from './ssh/support.js';
import { makeTempDir, removeTempDir } from '../../support/workspace.js';

let base: string;
let sshd: Sshd;
beforeAll(async () => {
  base = await makeTempDir('lorenz-path-first-');
  sshd = await startSshd();
}, 60_000);
afterAll(async () => {
  await sshd?.stop();
  await removeTempDir(base);
});

const FIRST = ['/opt/lorenz guard/bin', '/opt/second'];
const PRINT = 'echo "$PATH"; shopt -q login_shell && echo login';

async function spawned(executor: Executor, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const child = executor.spawn(PRINT, { cwd, env, pathFirst: FIRST });
  child.stdin.end();
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await Promise.all([child.exited, once(child.stdout, 'end')]);
  return output.trim();
}

describe('pathFirst comes first after the login profile, and keeps its PATH after it', () => {
  it.each(['a fresh spawn', 'a process started ahead', 'a bridge (spawn)'])(
    'on this machine, through %s',
    async (how) => {
      const home = join(base, how.replaceAll(' ', '-'));
      await mkdir(home);
      await writeFile(join(home, '.bash_profile'), 'PATH=/usr/bin:/bin\nexport PATH\n');
      const env = { PATH: '/caller/bin:/usr/bin:/bin', HOME: home, LANG: 'C' };
      const executor = createLocalExecutor(
        how === 'a process started ahead' ? { commandsAhead: { env } } : {},
      );
      try {
        const options = { cwd: home, timeoutMs: 10_000, env };
        // The first command starts the next one's process ahead; the second takes it.
        const first = await executor.runCommand(PRINT, { ...options, pathFirst: FIRST });
        const output =
          how === 'a bridge (spawn)'
            ? await spawned(executor, home, env)
            : how === 'a process started ahead'
              ? (await executor.runCommand(PRINT, { ...options, pathFirst: FIRST })).output
              : first.output;
        expect(output).toBe(`${FIRST.join(':')}:/usr/bin:/bin\nlogin`);
      } finally {
        await executor.shutdown();
      }
    },
  );

  it.each(['runCommand', 'spawn'])('on an SSH worker, through %s', async (how) => {
    const executor = await sshExecutor(sshd);
    try {
      const options = { cwd: sshd.home, timeoutMs: 10_000, env: process.env };
      const profile = (await executor.runCommand('echo "$PATH"', options)).output;
      const output =
        how === 'spawn'
          ? await spawned(executor, sshd.home, process.env)
          : (await executor.runCommand(PRINT, { ...options, pathFirst: FIRST })).output;
      expect(output).toBe(`${FIRST.join(':')}:${profile}\nlogin`);
    } finally {
      await executor.shutdown();
    }
  });
});
