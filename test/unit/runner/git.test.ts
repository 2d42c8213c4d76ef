// The runner's side of git workspaces: `--git-credentials` names the mounted Secret, the
// branch comes from the run's inputs (the IssueRun's status), and no token leaves the Pod
// in anything it reports. Against the HTTPS git server fixture, with the real git CLI.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRunnerArgs, runRunner } from '../../../src/runner/main.js';
import type { LorenzEvent } from '../../../src/workflow/events.js';
import { startGitServer, type GitServer } from '../../support/fakes/git-server.js';
import { gitWorkflowText, writeRunInputs } from './run-inputs.js';

const TOKEN = 'ghp_runnerGitToken0123456789abcd';
const REPO = 'acme/app';
let server: GitServer;
let dir: string;

beforeAll(async () => {
  server = await startGitServer({ addresses: ['127.0.0.1'], users: { 'x-access-token': TOKEN } });
  await server.createRepo(REPO, { private: true, files: { 'README.md': 'app\n' } });
  dir = await mkdtemp(join(tmpdir(), 'lorenz-runner-git-'));
});
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('runner flags', () => {
  it('takes --git-credentials, and nothing when it is absent', () => {
    expect(parseRunnerArgs(['--git-credentials', '/lorenz/git-credentials'])).toMatchObject({
      gitCredentials: '/lorenz/git-credentials',
    });
    expect(parseRunnerArgs([])).not.toHaveProperty('gitCredentials');
  });
});

/** The inputs the controller renders, with the branch its status keeps. */
async function writeInputs(text: string, branch: string | undefined): Promise<string> {
  const inputsDir = await mkdtemp(join(dir, 'inputs-'));
  return writeRunInputs(inputsDir, text, { title: 'Renamed since', ...(branch ? { branch } : {}) });
}

/** A Secret volume as the kubelet lays it out: `..data` and a file per key. */
async function credentialsVolume(): Promise<string> {
  const volume = await mkdtemp(join(dir, 'creds-'));
  await mkdir(join(volume, '..data'));
  await writeFile(join(volume, '..data', 'marker'), '');
  await writeFile(join(volume, '127.0.0.1'), `${TOKEN}\n`);
  return volume;
}

async function run(inputsDir: string, gitCredentials: string | undefined) {
  const lines: string[] = [];
  const root = await mkdtemp(join(dir, 'ws-'));
  const termination = join(root, '..', `termination-${Date.now()}`);
  const code = await runRunner({
    inputsDir,
    slot: 0,
    workspaceRoot: root,
    issueStateFile: join(root, 'state'),
    terminationLogPath: termination,
    keepWorkspace: false,
    noAgent: true,
    ...(gitCredentials ? { gitCredentials } : {}),
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: root,
      GIT_SSL_CAINFO: server.caFile,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
    },
    write: (line) => lines.push(line),
  });
  const events = lines.map((line) => JSON.parse(line) as LorenzEvent);
  return { code, events, text: lines.join('') + (await readFile(termination, 'utf8')) };
}

const workflow = (hooks: string) => gitWorkflowText(server.repoUrl(REPO), hooks);

describe('runner: git workspaces', () => {
  it('clones on the branch of the inputs with the mounted credentials, and redacts the token', async () => {
    const credentials = await credentialsVolume();
    const hooks = [
      // A hook that prints the token (and the branch it is on), then pushes a commit.
      `  after_create: 'git branch --show-current; cat ${credentials}/127.0.0.1; echo "url https://x:${TOKEN}@host"'`,
      `  before_run: 'echo hi > agent.txt && git add agent.txt && git commit -qm "from the hook" && git push -q origin HEAD 2>&1'`,
    ].join('\n');
    const inputsDir = await writeInputs(workflow(hooks), 'feature/kept-branch');
    const { code, events, text } = await run(inputsDir, credentials);
    expect(code, text).toBe(0);
    const after = events.find(
      (event) => event.type === 'hook_execution' && event.message.status === 'completed',
    );
    expect(after?.type === 'hook_execution' && after.message.output).toMatch(
      /^feature\/kept-branch\n\[redacted\]\nurl https:\/\/x:\[redacted\]@host/,
    );
    expect(text).not.toContain(TOKEN);
    const git = events
      .filter((event) => event.type === 'git_workspace')
      .map((event) => event.message);
    expect(git.map((message) => `${message.step} ${message.status}`)).toContain('clone completed');
    expect(git.every((message) => message.branch === 'feature/kept-branch')).toBe(true);
    // The push reached the remote on the stored branch, not on one rendered from the title.
    expect(await server.readFile(REPO, 'feature/kept-branch', 'agent.txt')).toBe('hi\n');
    expect(await server.branchSha(REPO, 'lorenz/eng-7-renamed-since')).toBeNull();
    expect(
      server.requests.some(
        (request) => request.user === 'x-access-token' && request.status === 200,
      ),
    ).toBe(true);
  });

  it('without credentials the private repository refuses the clone', async () => {
    const inputsDir = await writeInputs(workflow('  before_run: "true"'), 'feature/none');
    const { code, text } = await run(inputsDir, undefined);
    expect(code).toBe(1);
    expect(text).toContain('workspace_clone_failed');
  });

  it('fails invalid_git_credentials when the directory holds something else', async () => {
    const bad = await mkdtemp(join(dir, 'bad-'));
    await writeFile(join(bad, 'Not A Host'), 'x');
    const inputsDir = await writeInputs(workflow('  before_run: "true"'), 'feature/bad');
    const { code, text } = await run(inputsDir, bad);
    expect(code).toBe(1);
    expect(text).toContain('invalid_git_credentials');
  });
});
