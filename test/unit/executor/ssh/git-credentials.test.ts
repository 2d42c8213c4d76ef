// Git credentials on an SSH worker: git runs on the host, so its credential helper reads a
// private copy of the per-host files there, made for the run and gone after it. Real git on
// the worker against the real HTTPS git server on loopback: 127.0.0.1 has a credential,
// 127.0.0.2 (the same server, another "host") has none.
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../../src/executor/local.js';
import type { Executor } from '../../../../src/executor/types.js';
import { stageCredentialsOnWorker } from '../../../../src/workspace/git/worker-credentials.js';
import { normalizeIssue } from '../../../../src/workflow/issue.js';
import { startGitServer, type GitServer } from '../../../support/fakes/git-server.js';
import { startSshd, type Sshd } from '../../../support/fakes/sshd.js';
import { existsOnWorker, marker, runLifecycle, sshExecutor } from './support.js';
import { makeTempDir, removeTempDir } from '../../../support/workspace.js';

const TOKEN = 'lorenz-worker-token-5c1e8d';
let sshd: Sshd;
let server: GitServer;
let local: string;
let credentials: string;
let caFile: string;

beforeAll(async () => {
  sshd = await startSshd();
  server = await startGitServer({ addresses: ['127.0.0.1', '127.0.0.2'], users: { alice: TOKEN } });
  local = await makeTempDir('lorenz-ssh-git-');
  credentials = join(local, 'credentials');
  await mkdir(credentials);
  await writeFile(join(credentials, '127.0.0.1'), `alice:${TOKEN}\n`);
  // The worker user verifies the server's certificate: a copy it can read.
  const shared = join(local, 'shared');
  await mkdir(shared);
  caFile = join(shared, 'ca.pem');
  await copyFile(server.caFile, caFile);
  await chmod(local, 0o755);
  await chmod(shared, 0o755);
  await chmod(caFile, 0o644);
  // Where the worker user cannot read them: on a real worker they are on another machine.
  await chmod(credentials, 0o700);
}, 60_000);
afterAll(async () => {
  await sshd?.stop();
  await server?.close();
  if (local) await removeTempDir(local);
});

describe('git credentials on an SSH worker', () => {
  it('clone and push a private repository with a per-run private copy, gone after the run', async () => {
    await server.createRepo('acme/app', { private: true });
    const executor = await sshExecutor(sshd);
    const name = `gitcred-${marker()}`;
    const other = server.repoUrl('acme/app', '127.0.0.2');
    try {
      const { summary, events } = await runLifecycle(
        executor,
        {
          workspace: { root: `~/${name}`, git: { repo: server.repoUrl('acme/app') } },
          hooks: {
            before_run: [
              'git config --get-all credential.helper > ../helper.txt',
              'dir=$(git config --get-all credential.helper | tail -1 | sed "s/.* .\\(.*\\).$/\\1/")',
              'stat -c "%a %U" "$dir" "$dir/127.0.0.1" > ../modes.txt',
              'echo work > work.txt && git add work.txt && git commit -qm work && git push -q origin HEAD',
              `if git ls-remote ${other} >/dev/null 2>&1; then echo other-host-read; fi`,
            ].join('\n'),
          },
        },
        {
          issue: normalizeIssue({ identifier: 'ENG-4', title: 'Four' }),
          env: { ...process.env, GIT_SSL_CAINFO: caFile },
          git: { credentialsDirectory: credentials },
          cleanup: false,
        },
      );
      expect(summary.slots[0]).toMatchObject({ succeeded: true });
      // The branch the hook pushed is on the server: the token reached git on the worker.
      expect(await server.readFile('acme/app', 'lorenz/eng-4-four', 'work.txt')).toBe('work\n');

      const helper = (await sshd.asWorker(`cat ~/${name}/helper.txt`)).trim().split('\n');
      const staged = /'([^']+)'$/.exec(helper.at(-1) ?? '')?.[1] ?? '';
      expect(staged).toMatch(/lorenz-git-credentials\.[A-Za-z0-9]{8}$/);
      expect(staged.startsWith(sshd.home)).toBe(false);
      expect((await sshd.asWorker(`cat ~/${name}/modes.txt`)).trim().split('\n')).toEqual([
        `700 ${sshd.user}`,
        `600 ${sshd.user}`,
      ]);
      // Gone with the run; nowhere in the workspace, the events, or the other host's requests.
      expect(await existsOnWorker(sshd, staged)).toBe(false);
      expect(await sshd.asWorker(`grep -rl ${TOKEN} ~/${name} || true`)).toBe('');
      expect(JSON.stringify(events)).not.toContain(TOKEN);
      const toOther = server.requests.filter((request) => request.address === '127.0.0.2');
      expect(toOther.length).toBeGreaterThan(0);
      expect(toOther.every((request) => request.password === null)).toBe(true);
      const toFirst = server.requests.filter((request) => request.address === '127.0.0.1');
      expect(toFirst.some((request) => request.password === TOKEN)).toBe(true);
      const output = events.flatMap((event) =>
        event.type === 'hook_execution' ? [event.message.output ?? ''] : [],
      );
      expect(output.join('\n')).not.toContain('other-host-read');
    } finally {
      await sshd.asWorker(`rm -rf ~/${name}`);
      await executor.shutdown();
    }
  });

  it('a copy that cannot be completed is removed and names the failure', async () => {
    const worker = createLocalExecutor();
    let made = '';
    const failing: Executor = {
      ...worker,
      remote: true,
      writeFile: async (path) => {
        made = join(path, '..');
        throw new Error(`disk full writing ${path}`);
      },
    };
    try {
      const error: unknown = await stageCredentialsOnWorker(failing, credentials, 5000).catch(
        (caught: unknown) => caught,
      );
      expect(error).toMatchObject({ code: 'workspace_clone_failed' });
      expect(String(error)).toContain('git credentials could not be placed on the worker');
      expect(String(error)).toContain('disk full');
      expect(made).toMatch(/lorenz-git-credentials\./);
      expect(existsSync(made)).toBe(false);
    } finally {
      await worker.shutdown();
    }
  });
});
