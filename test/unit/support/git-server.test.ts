// The git server fixture, driven by the real git CLI over HTTPS: what later tests of git
// workspaces rely on (anonymous and authenticated clones, shallow depth, pushes, refused
// pushes, a second host) is proven here against git itself.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitServer, startGitServer } from '../../support/fakes/git-server.js';

const TOKEN = 'ghp_gitServerToken0123456789';
let server: GitServer;
let scratch: string;

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** The git CLI as a client would run it: trusting the fixture's CA, never prompting. Always
 * asynchronous: the server answers from this same process, so a sync call would deadlock. */
function git(args: string[], cwd = scratch): Promise<Result> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: scratch,
    GIT_SSL_CAINFO: server.caFile,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'client',
    GIT_AUTHOR_EMAIL: 'client@example.com',
    GIT_COMMITTER_NAME: 'client',
    GIT_COMMITTER_EMAIL: 'client@example.com',
  };
  return new Promise((resolve) => {
    execFile('git', args, { cwd, env }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** `https://user:token@host:port/owner/name.git` */
function withCredentials(url: string, user: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = password;
  return parsed.toString();
}

let clones = 0;
async function clone(url: string, ...extra: string[]): Promise<[Result, string]> {
  const dir = join(scratch, `clone-${++clones}`);
  return [await git(['clone', '-q', ...extra, url, dir]), dir];
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'lorenz-git-client-'));
  server = await startGitServer({
    addresses: ['127.0.0.1', '127.0.0.2'],
    users: { 'x-access-token': TOKEN },
  });
});

afterAll(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('git server fixture', () => {
  it('serves a public repo to an anonymous clone over https', async () => {
    await server.createRepo('acme/public', { files: { 'README.md': 'hello\n', 'src/a.txt': 'a' } });
    const [result, dir] = await clone(server.repoUrl('acme/public'));
    expect(result).toMatchObject({ code: 0 });
    expect(await readFile(join(dir, 'src/a.txt'), 'utf8')).toBe('a');
    expect((await git(['branch', '--show-current'], dir)).stdout.trim()).toBe('main');
    const seen = server.requests.filter((request) => request.path.startsWith('/acme/public.git'));
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((request) => request.user === null && request.status === 200)).toBe(true);
  });

  it('gives a clone with --depth 50 exactly 50 of 60 commits', async () => {
    await server.createRepo('acme/long', { commits: 60, defaultBranch: 'trunk' });
    const [result, dir] = await clone(server.repoUrl('acme/long'), '--depth', '50');
    expect(result).toMatchObject({ code: 0 });
    expect((await git(['rev-list', '--count', 'HEAD'], dir)).stdout.trim()).toBe('50');
    expect((await git(['branch', '--show-current'], dir)).stdout.trim()).toBe('trunk');
  });

  it('asks for credentials to read a private repo and accepts the right ones', async () => {
    await server.createRepo('acme/secret', { private: true, files: { 'key.txt': 'k' } });
    const url = server.repoUrl('acme/secret');
    const [anonymous] = await clone(url);
    expect(anonymous.code).not.toBe(0);
    const [wrong] = await clone(withCredentials(url, 'x-access-token', 'nope'));
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/Authentication failed/);
    const [right, dir] = await clone(withCredentials(url, 'x-access-token', TOKEN));
    expect(right).toMatchObject({ code: 0 });
    expect(await readFile(join(dir, 'key.txt'), 'utf8')).toBe('k');
    const seen = server.requests.filter((request) => request.path.startsWith('/acme/secret.git'));
    expect(seen.filter((request) => request.status === 401).length).toBeGreaterThanOrEqual(2);
    expect(seen).toContainEqual(
      expect.objectContaining({ user: 'x-access-token', password: TOKEN, status: 200 }),
    );
  });

  it('refuses an anonymous push and takes an authenticated one', async () => {
    await server.createRepo('acme/push');
    const [, dir] = await clone(server.repoUrl('acme/push'));
    await writeFile(join(dir, 'change.txt'), 'changed\n');
    await git(['add', '-A'], dir);
    await git(['commit', '-q', '-m', 'change'], dir);
    const before = await server.branchSha('acme/push', 'main');
    const anonymous = await git(['push', 'origin', 'HEAD:main'], dir);
    expect(anonymous.code).not.toBe(0);
    expect(anonymous.stderr).toMatch(/could not read Username/);
    expect(server.requests).toContainEqual(
      expect.objectContaining({
        path: '/acme/push.git/info/refs?service=git-receive-pack',
        user: null,
        status: 401,
      }),
    );
    expect(await server.branchSha('acme/push', 'main')).toBe(before);

    const authed = withCredentials(server.repoUrl('acme/push'), 'x-access-token', TOKEN);
    expect(await git(['push', authed, 'HEAD:main', 'HEAD:issue-1'], dir)).toMatchObject({
      code: 0,
    });
    const head = (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
    expect(await server.branchSha('acme/push', 'main')).toBe(head);
    expect(await server.branchSha('acme/push', 'issue-1')).toBe(head);
    expect(await server.readFile('acme/push', 'main', 'change.txt')).toBe('changed\n');
    expect(await server.branchSha('acme/push', 'missing')).toBeNull();
    expect(await server.readFile('acme/push', 'main', 'missing.txt')).toBeNull();
  });

  it('refuses pushes to protected branches with the remote message, until cleared', async () => {
    await server.createRepo('acme/guarded');
    const authed = withCredentials(server.repoUrl('acme/guarded'), 'x-access-token', TOKEN);
    const [, dir] = await clone(authed);
    await git(['commit', '-q', '--allow-empty', '-m', 'one'], dir);
    await server.refusePushesTo('acme/guarded', ['main']);
    const refused = await git(['push', 'origin', 'HEAD:main'], dir);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/remote: lorenz-test: pushes to refs\/heads\/main are refused/);
    expect(refused.stderr).toMatch(/pre-receive hook declined/);
    expect(await git(['push', 'origin', 'HEAD:lorenz/issue-2'], dir)).toMatchObject({ code: 0 });
    // The fixture's own commits land even on a refused branch.
    const sha = await server.commit('acme/guarded', 'main', { 'up.txt': 'upstream' });
    expect(await server.branchSha('acme/guarded', 'main')).toBe(sha);
    await server.refusePushesTo('acme/guarded', []);
    await git(['pull', '-q', '--no-rebase', 'origin', 'main'], dir);
    expect(await git(['push', 'origin', 'HEAD:main'], dir)).toMatchObject({ code: 0 });
  });

  it('commits onto new branches from a chosen start', async () => {
    await server.createRepo('acme/branches', { files: { 'a.txt': 'a' } });
    const base = await server.commit('acme/branches', 'develop', { 'b.txt': 'b' });
    const sha = await server.commit(
      'acme/branches',
      'feature',
      { 'c.txt': 'c' },
      { from: 'develop' },
    );
    expect(await server.readFile('acme/branches', 'feature', 'b.txt')).toBe('b');
    expect(await server.readFile('acme/branches', 'main', 'b.txt')).toBeNull();
    expect(await server.readFile('acme/branches', `${sha}~1`, 'c.txt')).toBeNull();
    expect(await server.branchSha('acme/branches', 'develop')).toBe(base);
  });

  it('answers on the second address as another host and records it', async () => {
    await server.createRepo('other/repo', { private: true });
    expect(server.url('127.0.0.2')).toBe(`https://127.0.0.2:${server.port}`);
    const url = withCredentials(server.repoUrl('other/repo', '127.0.0.2'), 'x-access-token', TOKEN);
    const [result] = await clone(url);
    expect(result).toMatchObject({ code: 0 });
    const seen = server.requests.filter((request) => request.path.startsWith('/other/repo.git'));
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((request) => request.address === '127.0.0.2')).toBe(true);
  });
});
