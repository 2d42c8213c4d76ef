import { once } from 'node:events';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../../src/executor/local.js';
import type { AgentStep } from '../../../../src/workspace/agent-step.js';
import { runIssueLifecycle, type LifecycleOptions } from '../../../../src/workspace/lifecycle.js';
import { parseConfig } from '../../../../src/workflow/config.js';
import type {
  GitWorkspaceMessage,
  LorenzEvent,
  RunSummary,
} from '../../../../src/workflow/events.js';
import { normalizeIssue } from '../../../../src/workflow/issue.js';
import { gitEnvironment, gitServerPerFile } from '../../../support/fakes/git-server-per-file.js';

/**
 * Git workspaces end to end with real git against a real HTTPS git server on loopback:
 * 127.0.0.1 and 127.0.0.2 are two hosts, and only the first has a credential.
 */
const TOKEN = 'lorenz-test-token-7f3a9c';
const executor = createLocalExecutor();
let repoCount = 0;
const fixture = gitServerPerFile('lorenz-gitws-', 'alice', TOKEN, ['127.0.0.1', '127.0.0.2']);

interface Shell {
  command: string;
  exitCode: number | null;
  output: string;
}

/**
 * An agent that runs shell commands in its workspace as a bridge is started: through the
 * executor, `bash -lc` (the login profile runs first: Debian's /etc/profile resets PATH),
 * with the environment and the PATH directories Lorenz gives it.
 */
function shellAgent(commands: string[], seen: Shell[]): AgentStep {
  return async (context) => {
    for (const command of commands) {
      const child = executor.spawn(command, {
        cwd: context.workspace,
        env: environment(),
        ...(context.pathFirst ? { pathFirst: context.pathFirst } : {}),
      });
      child.stdin.end();
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const [{ exitCode }] = await Promise.all([
        child.exited,
        once(child.stdout, 'end'),
        once(child.stderr, 'end'),
      ]);
      seen.push({ command, exitCode, output: output.trim() });
    }
    return { ok: true, turns: 1 };
  };
}

const environment = (): NodeJS.ProcessEnv => gitEnvironment(fixture.server, fixture.base);

interface Run {
  summary: RunSummary;
  events: LorenzEvent[];
  git: GitWorkspaceMessage[];
  shell: Shell[];
  root: string;
}

/** A workspace root of its own under the test's folder, not made yet. */
const newRoot = (): string => join(fixture.base, `root-${(repoCount += 1)}`);
/** The lifecycle of a slot whose workspace a snapshot restored, kept for a look afterwards. */
const RESTORED: Partial<LifecycleOptions> = { restoredSlots: new Set([0]), cleanup: false };

async function runWith(
  git: Record<string, unknown>,
  options: {
    hooks?: Record<string, string>;
    agent?: string[];
    title?: string;
    lifecycle?: Partial<LifecycleOptions>;
    /** A root made (and filled) beforehand, as a snapshot's restore leaves it. */
    root?: string;
  } = {},
): Promise<Run> {
  const root = options.root ?? newRoot();
  const events: LorenzEvent[] = [];
  const shell: Shell[] = [];
  const { config } = parseConfig({
    workspace: { root, git },
    hooks: options.hooks ?? {},
  });
  const summary = await runIssueLifecycle({
    config,
    issue: normalizeIssue({ identifier: 'ENG-9', title: options.title ?? 'Fix login' }),
    executor,
    emit: (event) => events.push(event),
    attempt: null,
    env: environment(),
    git: { credentialsDirectory: fixture.credentials },
    ...(options.agent ? { agent: shellAgent(options.agent, shell) } : {}),
    ...options.lifecycle,
  });
  const gitEvents = events.flatMap((event) =>
    event.type === 'git_workspace' ? [event.message] : [],
  );
  return { summary, events, git: gitEvents, shell, root };
}

const BRANCH = 'lorenz/eng-9-fix-login';
let repo: string;
beforeEach(() => {
  repo = `acme/web-${(repoCount += 1)}`;
});

/** runWith on this test's repository, cloned from the first host (the one with a credential). */
const runOnRepo = (options?: Parameters<typeof runWith>[1]): Promise<Run> =>
  runWith({ repo: fixture.server.repoUrl(repo) }, options);

const COMMIT_AND_PUSH = [
  'echo "from the agent" > agent.txt && git add agent.txt && git commit -qm "agent work" && git push -q',
];

describe('a git workspace', () => {
  it('clones the last 50 commits on a new issue branch; the agent commits and pushes with the host credential', async () => {
    await fixture.server.createRepo(repo, { private: true, commits: 60 });
    const run = await runOnRepo({
      hooks: { after_create: 'git rev-list --count HEAD && git branch --show-current' },
      agent: [...COMMIT_AND_PUSH, 'cat .git/config', 'env', 'ls -a'],
    });
    expect(run.summary.succeeded).toBe(true);
    const afterCreate = run.events.find(
      (event) => event.type === 'hook_execution' && event.message.status === 'completed',
    );
    expect(afterCreate?.type === 'hook_execution' && afterCreate.message.output).toBe(
      `50\n${BRANCH}`,
    );
    expect(run.shell[0]?.exitCode).toBe(0);
    expect(await fixture.server.readFile(repo, BRANCH, 'agent.txt')).toBe('from the agent\n');
    expect(run.git.map((message) => `${message.step} ${message.status}`)).toEqual([
      'clone completed',
      'branch completed',
      'push completed',
    ]);
    // The token is in no event, not in the clone's config, the agent's environment or files.
    expect(JSON.stringify(run.events)).not.toContain(TOKEN);
    for (const shell of run.shell) expect(shell.output).not.toContain(TOKEN);
    expect(run.shell[1]?.output).toContain('helper = !');
    // The workspace and Lorenz's scripts are gone at the end.
    expect(await readdir(run.root)).toEqual([]);
  });

  it('clones from another host anonymously: that host never sees the credential, and nothing pushes', async () => {
    await fixture.server.createRepo(repo);
    const before = fixture.server.requests.length;
    const run = await runWith(
      { repo: fixture.server.repoUrl(repo, '127.0.0.2') },
      { agent: COMMIT_AND_PUSH },
    );
    expect(run.summary.succeeded).toBe(true);
    expect(run.shell[0]?.exitCode).not.toBe(0);
    expect(run.shell[0]?.output).toMatch(
      /could not read Username|Authentication failed|terminal prompts disabled/,
    );
    const seen = fixture.server.requests.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    expect(
      seen.every((request) => request.address === '127.0.0.2' && request.password === null),
    ).toBe(true);
    expect(await fixture.server.branchSha(repo, BRANCH)).toBeNull();
  });

  it('checks out an existing branch as the remote has it and keeps the branch it was given when the issue is renamed', async () => {
    await fixture.server.createRepo(repo, { private: true });
    await fixture.server.commit(repo, BRANCH, { 'work.txt': 'earlier work\n' });
    const run = await runOnRepo({
      title: 'A new title',
      lifecycle: { git: { credentialsDirectory: fixture.credentials, branch: BRANCH } },
      agent: ['git branch --show-current && cat work.txt'],
    });
    expect(run.shell[0]?.output).toBe(`${BRANCH}\nearlier work`);
    expect(run.git.find((message) => message.step === 'branch')?.detail).toBe(
      `checked out ${BRANCH} as the remote has it`,
    );
  });

  it('merges the default branch up into a branch behind it, and pushes the merge', async () => {
    await fixture.server.createRepo(repo, { private: true });
    await fixture.server.commit(repo, BRANCH, { 'work.txt': 'work\n' });
    await fixture.server.commit(repo, 'main', { 'news.txt': 'new on main\n' });
    const run = await runOnRepo({ agent: ['cat news.txt work.txt'] });
    expect(run.shell[0]?.output).toBe('new on main\nwork');
    expect(await fixture.server.readFile(repo, BRANCH, 'news.txt')).toBe('new on main\n');
    expect(run.git.find((message) => message.step === 'merge_up')).toMatchObject({
      status: 'completed',
      detail: `merged main into ${BRANCH} and pushed`,
    });
  });

  it('undoes a conflicting merge-up with a warning: the branch stays as the remote has it', async () => {
    await fixture.server.createRepo(repo, { private: true, files: { 'shared.txt': 'base\n' } });
    const remoteSha = await fixture.server.commit(repo, BRANCH, { 'shared.txt': 'branch\n' });
    await fixture.server.commit(repo, 'main', { 'shared.txt': 'main\n' });
    const run = await runOnRepo({
      agent: ['git rev-parse HEAD && git status --porcelain && cat shared.txt'],
    });
    expect(run.summary.succeeded).toBe(true);
    expect(run.shell[0]?.output).toBe(`${remoteSha}\nbranch`);
    expect(await fixture.server.branchSha(repo, BRANCH)).toBe(remoteSha);
    const warning = run.git.find((message) => message.step === 'merge_up');
    expect(warning?.status).toBe('warning');
    expect(warning?.detail).toContain('failed and was undone');
  });

  it('undoes a merge-up the remote refuses to take, with a warning', async () => {
    await fixture.server.createRepo(repo, { private: true });
    const remoteSha = await fixture.server.commit(repo, BRANCH, { 'work.txt': 'work\n' });
    await fixture.server.commit(repo, 'main', { 'news.txt': 'news\n' });
    await fixture.server.refusePushesTo(repo, [BRANCH]);
    const run = await runOnRepo({ agent: ['git rev-parse HEAD; ls'] });
    expect(run.shell[0]?.output).toBe(`${remoteSha}\nREADME.md\nwork.txt`);
    expect(await fixture.server.branchSha(repo, BRANCH)).toBe(remoteSha);
    const warning = run.git.find((message) => message.step === 'merge_up');
    expect(warning?.status).toBe('warning');
    expect(warning?.detail).toContain('the remote refused');
  });
});

describe('what an attempt pushed', () => {
  const commit = (subject: string) =>
    `echo ${JSON.stringify(subject)} >> work.txt && git add work.txt && git commit -qm ${JSON.stringify(subject)}`;
  const pushed = (run: Run) => run.git.filter((message) => message.step === 'push');

  it.each([
    {
      name: 'two commits pushed, a third left unpushed',
      agent: [
        `${commit('first')} && ${commit('second')} && git push -q && ${commit('local only')}`,
      ],
      subjects: ['second', 'first'],
    },
    {
      name: 'two pushes of one commit each',
      agent: [`${commit('one')} && git push -q`, `${commit('two')} && git push -q`],
      subjects: ['two', 'one'],
    },
    {
      name: 'a push by after_run, after the agent',
      agent: [commit('by the agent')],
      hooks: { after_run: 'git push -q' },
      subjects: ['by the agent'],
    },
    { name: 'nothing pushed', agent: [commit('kept local')], subjects: [] },
  ])('reports the commits pushed to the branch: $name', async ({ agent, hooks, subjects }) => {
    await fixture.server.createRepo(repo, { private: true });
    const run = await runOnRepo({ agent, ...(hooks ? { hooks } : {}) });
    expect(run.summary.succeeded).toBe(true);
    if (subjects.length === 0) {
      expect(pushed(run)).toEqual([]);
      expect(await fixture.server.branchSha(repo, BRANCH)).toBeNull();
      return;
    }
    expect(pushed(run)).toHaveLength(1);
    const [record] = pushed(run);
    expect(record).toMatchObject({
      status: 'completed',
      branch: BRANCH,
      detail: `pushed ${subjects.length} commit${subjects.length === 1 ? '' : 's'} to ${BRANCH}`,
    });
    expect(record?.commits?.map((c) => c.subject)).toEqual(subjects);
    // Newest first: the first listed is what the remote's branch now points at.
    expect(record?.commits?.[0]?.sha).toBe(await fixture.server.branchSha(repo, BRANCH));
    for (const c of record?.commits ?? []) expect(c.sha).toMatch(/^[0-9a-f]{40}$/);
  });

  it("counts the merge-up's merge, not the default branch's commits it brought in nor the branch's earlier work", async () => {
    await fixture.server.createRepo(repo, { private: true });
    await fixture.server.commit(repo, BRANCH, { 'work.txt': 'earlier work\n' });
    await fixture.server.commit(repo, 'main', { 'news.txt': 'new on main\n' });
    const run = await runOnRepo({ agent: [`${commit('after the merge')} && git push -q`] });
    const [record] = pushed(run);
    expect(record?.commits?.map((c) => c.subject)).toEqual([
      'after the merge',
      expect.stringMatching(/^Merge .*main/),
    ]);
  });

  it('lists at most the newest 50 commits and says how many there were', async () => {
    await fixture.server.createRepo(repo, { private: true });
    const run = await runOnRepo({
      // 60 commits in one git process (fast-import), not 60 runs of the guarded git.
      agent: [
        [
          'branch=$(git symbolic-ref HEAD) && tip=$(git rev-parse HEAD) &&',
          'for i in $(seq 1 60); do',
          '  printf "commit %s\\ncommitter A <a@example.com> %d +0000\\ndata <<END\\ncommit %d\\nEND\\n" "$branch" $((1700000000 + i)) $i;',
          '  [ $i = 1 ] && printf "from %s\\n" "$tip"; printf "\\n";',
          'done | git fast-import --quiet && git push -q',
        ].join(' '),
      ],
    });
    const [record] = pushed(run);
    expect(record?.detail).toBe(`pushed 60 commits to ${BRANCH} (the newest 50 listed)`);
    expect(record?.commits).toHaveLength(50);
    expect(record?.commits?.[0]?.subject).toBe('commit 60');
    expect(record?.commits?.[49]?.subject).toBe('commit 11');
  });
});

describe('protection', () => {
  it('refuses pushes to the default and protected branches, and every way around the hooks', async () => {
    await fixture.server.createRepo(repo, { private: true });
    const mainSha = await fixture.server.branchSha(repo, 'main');
    const run = await runWith(
      { repo: fixture.server.repoUrl(repo), protected: ['release/*'] },
      {
        agent: [
          // An alias that is not a way around the hooks runs as git runs it.
          'git commit -q --allow-empty -m work && git config alias.ci commit && git ci -q --allow-empty -m again',
          'git push origin HEAD:main',
          'git push origin HEAD:refs/heads/release/1',
          'git push --all origin',
          'git push --no-verify',
          'git push --no-veri',
          'git commit --allow-empty -nm skip',
          'git -c core.hooksPath=/dev/null commit --allow-empty -m skip',
          'GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.hooksPath GIT_CONFIG_VALUE_0=/dev/null git commit --allow-empty -m skip',
          'git config core.hooksPath /dev/null',
          // What would drop Lorenz's core.hooksPath, and aliases of what the wrapper refuses.
          'git config --remove-section core',
          'git config --rename-section core old',
          'git config include.path /tmp/hooks-elsewhere',
          'git -c include.path=/tmp/hooks-elsewhere commit --allow-empty -m skip',
          'GIT_EDITOR=true git config --edit',
          'git -c alias.p="push --no-verify" p',
          'git config alias.up "push origin HEAD:main" && git up',
          'git config alias.nv "commit --no-verify" && git nv --allow-empty -m skip',
          // The real git, past the wrapper: the pre-push hook still refuses.
          '"$(type -P -a git | sed -n 2p)" push origin HEAD:main',
          '"$(type -P -a git | sed -n 2p)" push origin HEAD:release/2',
          'git push -q',
        ],
      },
    );
    const [commit, ...attempts] = run.shell;
    expect(commit?.exitCode).toBe(0);
    const pushed = attempts.pop();
    expect(pushed?.exitCode).toBe(0);
    for (const attempt of attempts) {
      expect(attempt.exitCode, attempt.command).not.toBe(0);
      expect(attempt.output, attempt.command).toMatch(
        /lorenz: (default_branch_refused|git_hooks_skip_refused)/,
      );
    }
    expect(await fixture.server.branchSha(repo, 'main')).toBe(mainSha);
    expect(await fixture.server.branchSha(repo, 'release/1')).toBeNull();
    expect(await fixture.server.branchSha(repo, 'release/2')).toBeNull();
    expect(await fixture.server.branchSha(repo, BRANCH)).not.toBeNull();
  });

  it("runs the repository's own hooks, installed by its setup, and they cannot be skipped", async () => {
    await fixture.server.createRepo(repo, {
      private: true,
      files: {
        '.lorenz/workspace.yml':
          "setup:\n  - [git, config, core.hooksPath, .githooks]\n  - [node, -e, \"require('fs').chmodSync('.githooks/pre-commit', 0o755)\"]\n",
        '.githooks/pre-commit':
          '#!/bin/bash\nif git diff --cached | grep -q FORBIDDEN; then echo "repository hook: forbidden"; exit 1; fi\n',
      },
    });
    const run = await runOnRepo({
      agent: [
        'echo FORBIDDEN > x.txt && git add x.txt && git commit -qm bad',
        'git commit -qm bad --no-verify',
        'git config --get core.hooksPath',
        'echo fine > x.txt && git add x.txt && git commit -qm good',
      ],
    });
    expect(run.git.find((message) => message.step === 'setup')?.status).toBe('completed');
    const [blocked, skipped, hooksPath, good] = run.shell;
    expect(blocked?.output).toContain('repository hook: forbidden');
    expect(blocked?.exitCode).not.toBe(0);
    expect(skipped?.output).toContain('git_hooks_skip_refused');
    expect(hooksPath?.output).toContain('@lorenz-git');
    expect(good?.exitCode).toBe(0);
  });
});

describe('setup and errors', () => {
  it('discards the clone when a setup step fails, naming the binary and its output', async () => {
    await fixture.server.createRepo(repo, {
      files: {
        '.lorenz/workspace.yml':
          'setup:\n  - [node, -e, "console.log(\'boom here\'); process.exit(3)"]\n',
      },
    });
    const run = await runOnRepo({ hooks: { after_create: 'true' } });
    const [slot] = run.summary.slots;
    expect(slot?.errorCode).toBe('workspace_setup_failed');
    expect(slot?.error).toContain('node exited 3: boom here');
    expect(existsSync(join(run.root, 'ENG-9'))).toBe(false);
    expect(run.events.some((event) => event.type === 'hook_execution')).toBe(false);
  });

  it('refuses a setup binary that is not allowed', async () => {
    await fixture.server.createRepo(repo, {
      files: { '.lorenz/workspace.yml': 'setup:\n  - [make, all]\n' },
    });
    const run = await runOnRepo();
    expect(run.summary.slots[0]?.error).toContain(
      '"make" is not an allowed binary (workspace.git.setup_binaries: git, node, npm, pnpm, mise)',
    );
  });

  it('runs teardown before the workspace is removed', async () => {
    const marker = join(fixture.base, `teardown-${repoCount}`);
    await fixture.server.createRepo(repo, {
      files: {
        '.lorenz/workspace.json': JSON.stringify({
          setup: [],
          teardown: [
            ['node', '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, process.cwd())`],
          ],
        }),
      },
    });
    const run = await runOnRepo();
    expect(run.summary.succeeded).toBe(true);
    expect(existsSync(marker)).toBe(true);
    expect(run.git.map((message) => `${message.step} ${message.status}`)).toContain(
      'teardown completed',
    );
  });

  it.each([
    [{}, 'workspace_repo_missing'],
    [{ repo: 'acme/web' }, 'workspace_repo_no_clone_address'],
    [{ repo: 'https://127.0.0.1/x.git', branch: 'main' }, 'workspace_branch_unresolved'],
  ])('%j fails %s before anything is on disk', async (git, code) => {
    const run = await runWith(git, { hooks: { after_create: 'true' } });
    expect(run.summary.slots[0]?.errorCode).toBe(code);
    expect(existsSync(run.root)).toBe(false);
  });

  it('expands owner/name through repo_template', async () => {
    await fixture.server.createRepo(repo);
    const run = await runWith({ repo, repo_template: `${fixture.server.url()}/{{ repo }}.git` });
    expect(run.summary.succeeded).toBe(true);
    expect(run.git[0]?.detail).toContain(fixture.server.repoUrl(repo));
  });

  it("fails workspace_clone_failed with git's message when the clone is refused, keeping nothing", async () => {
    await fixture.server.createRepo(repo, { private: true });
    const run = await runWith({ repo: fixture.server.repoUrl(repo, '127.0.0.2') });
    expect(run.summary.slots[0]?.errorCode).toBe('workspace_clone_failed');
    expect(run.summary.slots[0]?.error).toMatch(/git clone .* exited 128/);
    expect(await readdir(run.root)).toEqual([]);
  });
});

describe('a git workspace restored from a snapshot', () => {
  it('is not cloned again: the default branch is caught up, the issue branch made from it, setup output kept', async () => {
    await fixture.server.createRepo(repo, { defaultBranch: 'main' });
    const root = newRoot();
    // What a warm-up left: a clone on the default branch with its setup's untracked output.
    // Asynchronously: the git server answers from this process, so a sync call would hang.
    await promisify(execFile)(
      'git',
      ['clone', '-q', '--depth', '50', fixture.server.repoUrl(repo), join(root, 'ENG-9')],
      { env: environment() },
    );
    writeFileSync(join(root, 'ENG-9', 'setup-marker'), 'set up\n');
    // The default branch moves after the snapshot was taken.
    await fixture.server.commit(repo, 'main', { 'later.txt': 'after the snapshot\n' });
    const run = await runOnRepo({
      root,
      hooks: { after_create: 'echo after_create > ran-after-create' },
      agent: ['git branch --show-current && cat later.txt setup-marker && ls ran-after-create'],
      lifecycle: RESTORED,
    });
    expect(run.summary.succeeded).toBe(true);
    expect(run.shell[0]?.output).toMatch(
      new RegExp(`^${BRANCH}\\nafter the snapshot\\nset up\\nls: cannot access 'ran-after-create'`),
    );
    expect(
      run.git.map((message) => `${message.step} ${message.status}: ${message.detail}`),
    ).toEqual([
      "clone completed: restored from a snapshot, main at the remote's tip",
      `branch completed: created ${BRANCH} from main`,
    ]);
  });

  it('a restored workspace that is not a clone fails workspace_clone_failed', async () => {
    await fixture.server.createRepo(repo);
    const root = newRoot();
    mkdirSync(join(root, 'ENG-9'), { recursive: true });
    const { summary } = await runOnRepo({ root, lifecycle: RESTORED });
    expect(summary.slots[0]).toMatchObject({
      succeeded: false,
      errorCode: 'workspace_clone_failed',
    });
    expect(summary.slots[0]?.error).toContain("the snapshot's workspace is not a git clone");
  });
});
