// `lorenz runner --prepare`, a Workflow's warm-up (docs/snapshots.md#the-warm-up-pod): the
// default branch cloned into <root>/.lorenz-source, the repository's setup and after_create run
// there, the tree digested and the result left in the termination message. Real git against
// the HTTPS git server fixture (a private repository: only the mounted credentials clone it),
// real bash, real files.
import { execFile } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import { INPUT_FILES, inputManifest, inputManifestText } from '../../../src/api/run-pod.js';
import { decodeWarmUpResult, type WarmUpResult } from '../../../src/api/warm-up.js';
import { SOURCE_TREE_DIR } from '../../../src/api/workspace-source.js';
import { runPrepare } from '../../../src/runner/prepare.js';
import type { LorenzEvent } from '../../../src/workflow/events.js';
import { workspaceTreeDigest } from '../../../src/workspace/tree-digest.js';
import { gitEnvironment, gitServerPerFile } from '../../support/fakes/git-server-per-file.js';

const TOKEN = 'lorenz-warm-up-token-5d1e7b';
let count = 0;
const fixture = gitServerPerFile('lorenz-prepare-', 'alice', TOKEN);

let repo: string;
let pod: string;
const root = () => join(pod, 'ws');
const tree = () => join(root(), SOURCE_TREE_DIR);
beforeEach(async () => {
  count += 1;
  repo = `acme/warm-${count}`;
  pod = join(fixture.base, `pod-${count}`);
  await mkdir(root(), { recursive: true });
});

/** The setup a repository declares: a marker written by node (an allowed binary). */
const SETUP_FILE = {
  '.lorenz/workspace.yml': `setup:\n  - [node, -e, "require('fs').writeFileSync('setup-marker', 'set up\\\\n')"]\n`,
};

function workflow(options: { git?: boolean; afterCreate?: string } = {}): string {
  const git =
    options.git === false ? '' : `workspace:\n  git:\n    repo: ${fixture.server.repoUrl(repo)}\n`;
  const hook =
    options.afterCreate === undefined
      ? ''
      : `  after_create: ${JSON.stringify(options.afterCreate)}\n`;
  return `---\n${git}hooks:\n  timeout_ms: 30000\n${hook}---\nWork on {{ issue.identifier }}.\n`;
}

/** The inputs as the controller's ConfigMap holds them: workflow.md and the manifest. */
async function writeInputs(workflowText: string | null): Promise<string> {
  const dir = join(pod, 'inputs');
  await mkdir(dir, { recursive: true });
  const files: Record<string, string> =
    workflowText === null ? {} : { [INPUT_FILES.workflow]: workflowText };
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  await writeFile(join(dir, INPUT_FILES.manifest), inputManifestText(inputManifest(files)));
  return dir;
}

const environment = (): NodeJS.ProcessEnv => gitEnvironment(fixture.server, fixture.base);

interface WarmUp {
  code: number;
  events: LorenzEvent[];
  output: string;
  termination: string;
  result: WarmUpResult | null;
}

async function warmUp(
  workflowText: string | null,
  options: { unlessCommit?: string; anonymous?: boolean } = {},
): Promise<WarmUp> {
  const lines: string[] = [];
  const terminationLogPath = join(pod, 'termination-log');
  const code = await runPrepare({
    inputsDir: await writeInputs(workflowText),
    workspaceRoot: root(),
    terminationLogPath,
    ...(options.anonymous ? {} : { gitCredentials: fixture.credentials }),
    ...(options.unlessCommit ? { unlessCommit: options.unlessCommit } : {}),
    env: environment(),
    write: (line) => lines.push(line),
  });
  const termination = await readFile(terminationLogPath, 'utf8');
  return {
    code,
    events: lines.map((line) => JSON.parse(line) as LorenzEvent),
    output: lines.join(''),
    termination,
    result: decodeWarmUpResult(termination),
  };
}

const git = async (cwd: string, ...args: string[]): Promise<string> =>
  (await promisify(execFile)('git', args, { cwd, env: environment() })).stdout.trim();

/** Every file's text below `dir`, symlinks not followed. */
async function allText(dir: string): Promise<string> {
  let text = '';
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) text += await readFile(join(entry.parentPath, entry.name), 'latin1');
  }
  return text;
}

const hookRecords = (events: LorenzEvent[]) =>
  events.flatMap((event) =>
    event.type === 'hook_execution' ? [`${event.message.hookName} ${event.message.status}`] : [],
  );

describe('lorenz runner --prepare: a git workspace', () => {
  it("clones the default branch, runs setup and after_create, and reports the tree's digest", async () => {
    await fixture.server.createRepo(repo, { private: true, files: SETUP_FILE, commits: 3 });
    const head = await fixture.server.branchSha(repo, 'main');
    const run = await warmUp(
      workflow({ afterCreate: 'echo {{ issue.identifier }} > after-create-marker; echo hello' }),
    );
    expect(run.code, run.output).toBe(0);
    const digest = await workspaceTreeDigest(tree());
    expect(run.result).toEqual({
      outcome: 'prepared',
      digest: digest.digest,
      commit: head,
      files: digest.files,
      bytes: digest.bytes,
      prepareMs: expect.any(Number),
      digestMs: expect.any(Number),
    });
    expect(await readFile(join(tree(), 'setup-marker'), 'utf8')).toBe('set up\n');
    expect(await readFile(join(tree(), 'after-create-marker'), 'utf8')).toBe('warm-up\n');
    // On the default branch at the remote's head: no issue branch.
    expect(await git(tree(), 'branch', '--show-current')).toBe('main');
    expect(await git(tree(), 'rev-parse', 'HEAD')).toBe(head);
    expect(await git(tree(), 'branch', '--list')).toBe('* main');
    // The records of a run, and warm_up_completed last with the termination message's result.
    expect(hookRecords(run.events)).toEqual(['after_create started', 'after_create completed']);
    const gitSteps = run.events.flatMap((event) =>
      event.type === 'git_workspace'
        ? [`${event.message.step} ${event.message.status} ${event.message.branch}`]
        : [],
    );
    expect(gitSteps).toEqual(['clone completed main', 'setup completed main']);
    expect(run.events.some((event) => event.type === 'hook_output')).toBe(true);
    expect(run.events.at(-1)).toMatchObject({ type: 'warm_up_completed', message: run.result });
    expect(run.events.some((event) => event.type === 'run_completed')).toBe(false);
  });

  it("leaves no secret and none of Lorenz's scripts in the tree or on the volume", async () => {
    await fixture.server.createRepo(repo, { private: true });
    // after_create prints the token and the clone's config (Lorenz's helper in it, then).
    const run = await warmUp(
      workflow({ afterCreate: `cat ${fixture.credentials}/127.0.0.1; git config --local --list` }),
    );
    expect(run.code, run.output).toBe(0);
    expect(run.output).not.toContain(TOKEN);
    expect(run.output).toContain('alice:[redacted]');
    expect(await allText(tree())).not.toContain(TOKEN);
    expect(await readdir(root())).toEqual([SOURCE_TREE_DIR]);
    const config = await readFile(join(tree(), '.git', 'config'), 'utf8');
    expect(config).not.toContain('credential');
    expect(config).not.toContain('hooksPath');
    expect(config).not.toContain('@lorenz-git');
  });

  it('a hooks path the repository set (husky) stays: the run takes it up', async () => {
    await fixture.server.createRepo(repo, { private: true });
    const run = await warmUp(workflow({ afterCreate: 'git config core.hooksPath .husky/_' }));
    expect(run.code, run.output).toBe(0);
    expect(await git(tree(), 'config', '--local', '--get', 'core.hooksPath')).toBe('.husky/_');
  });

  describe('--unless-commit', () => {
    it("the default branch's head is that commit: unchanged, and nothing on the volume is touched", async () => {
      await fixture.server.createRepo(repo, { private: true, files: SETUP_FILE });
      const head = (await fixture.server.branchSha(repo, 'main')) ?? '';
      await mkdir(tree());
      await writeFile(join(tree(), 'kept'), 'the last warm-up\n');
      const run = await warmUp(workflow({ afterCreate: 'touch after-create-marker' }), {
        unlessCommit: head,
      });
      expect(run.code, run.output).toBe(0);
      expect(run.result).toEqual({ outcome: 'unchanged', commit: head });
      expect(JSON.parse(run.termination)).toEqual({ outcome: 'unchanged', commit: head });
      expect(await readdir(root())).toEqual([SOURCE_TREE_DIR]);
      expect(await readdir(tree())).toEqual(['kept']);
      expect(hookRecords(run.events)).toEqual([]);
      expect(run.events.map((event) => event.type)).toEqual(['warm_up_completed']);
    });

    it('the default branch has moved on: moved, with the new head, and still nothing prepared', async () => {
      await fixture.server.createRepo(repo, { private: true, files: SETUP_FILE });
      const before = (await fixture.server.branchSha(repo, 'main')) ?? '';
      const after = await fixture.server.commit(repo, 'main', { 'later.txt': 'later\n' });
      const run = await warmUp(workflow({ afterCreate: 'touch after-create-marker' }), {
        unlessCommit: before,
      });
      expect(run.code, run.output).toBe(0);
      expect(run.result).toEqual({ outcome: 'moved', commit: after });
      expect(await readdir(root())).toEqual([]);
      expect(hookRecords(run.events)).toEqual([]);
    });
  });

  it('a retried warm-up on the same claim replaces the stale tree and starts clean', async () => {
    await fixture.server.createRepo(repo, { private: true, files: SETUP_FILE });
    await mkdir(join(tree(), 'half-done'), { recursive: true });
    await writeFile(join(tree(), 'half-done', 'stale'), 'from the Pod before\n');
    const run = await warmUp(workflow());
    expect(run.code, run.output).toBe(0);
    await expect(readdir(join(tree(), 'half-done'))).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(tree(), 'setup-marker'), 'utf8')).toBe('set up\n');
    const removed = run.events.find((event) => event.type === 'workspace_removed');
    expect(removed?.message).toEqual({ path: tree(), slot: 0 });
    expect(run.result?.outcome === 'prepared' && run.result.digest).toBe(
      (await workspaceTreeDigest(tree())).digest,
    );
  });
});

describe('lorenz runner --prepare: without workspace.git', () => {
  it('makes the directory and runs after_create; the commit is null', async () => {
    const run = await warmUp(
      workflow({ git: false, afterCreate: 'echo made > marker && mkdir -p cache' }),
    );
    expect(run.code, run.output).toBe(0);
    expect(await readFile(join(tree(), 'marker'), 'utf8')).toBe('made\n');
    const digest = await workspaceTreeDigest(tree());
    expect(run.result).toMatchObject({
      outcome: 'prepared',
      commit: null,
      digest: digest.digest,
      files: 1,
      bytes: 5,
    });
  });
});

/**
 * Ways a warm-up fails: its code, its error, and what the volume holds after it (a stale tree
 * is removed only once the remote has been asked; a half-prepared one never stays).
 */
interface Failure {
  arrange: () => Promise<string | null>;
  anonymous?: boolean;
  error: RegExp;
  left: string[];
}
const failures: [string, string, Failure][] = [
  [
    'after_create exits 3',
    'hook_failed',
    {
      arrange: async () => {
        await fixture.server.createRepo(repo, { private: true, files: SETUP_FILE });
        return workflow({ afterCreate: `echo "token ${TOKEN}"; exit 3` });
      },
      error: /hook failed with status 3: token \[redacted\]/,
      left: [],
    },
  ],
  [
    'a setup step fails',
    'workspace_setup_failed',
    {
      arrange: async () => {
        const setup = 'setup:\n  - [node, -e, "process.exit(4)"]\n';
        await fixture.server.createRepo(repo, {
          private: true,
          files: { '.lorenz/workspace.yml': setup },
        });
        return workflow();
      },
      error: /node exited 4/,
      left: [],
    },
  ],
  [
    'the private repository without credentials',
    'workspace_clone_failed',
    {
      arrange: async () => {
        await fixture.server.createRepo(repo, { private: true });
        return workflow();
      },
      anonymous: true,
      error: /git ls-remote .* exited 128/,
      left: ['stale'],
    },
  ],
  [
    'inputs without workflow.md',
    'input_digest_mismatch',
    { arrange: async () => null, error: /workflow\.md is not in the manifest/, left: ['stale'] },
  ],
];

describe('lorenz runner --prepare: failures', () => {
  it.each(failures)('%s: failed %s, exit 1', async (_what, code, failure) => {
    await mkdir(tree());
    await writeFile(join(tree(), 'stale'), '');
    const run = await warmUp(await failure.arrange(), { anonymous: failure.anonymous === true });
    expect(run.code).toBe(1);
    expect(run.result).toEqual({ outcome: 'failed', errorCode: code, error: expect.any(String) });
    expect(run.result?.outcome === 'failed' && run.result.error).toMatch(failure.error);
    expect(run.output + run.termination).not.toContain(TOKEN);
    expect(run.events.at(-1)).toMatchObject({ type: 'warm_up_completed', message: run.result });
    // Lorenz's scripts are gone either way.
    expect(await readdir(root())).toEqual(failure.left.length > 0 ? [SOURCE_TREE_DIR] : []);
    if (failure.left.length > 0) expect(await readdir(tree())).toEqual(failure.left);
  });
});
