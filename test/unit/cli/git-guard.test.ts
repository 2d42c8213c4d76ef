import { spawn, spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_BINS } from '../../support/cli-bins.js';
import { gitServerPerFile } from '../../support/fakes/git-server-per-file.js';

/**
 * `lorenz run` on this machine with a git workspace against a real HTTPS git server, the
 * scripted agent as the bridge, every command under `bash -lc`: the login profile runs
 * first (Debian's /etc/profile sets PATH outright, and so may a user's ~/.bash_profile),
 * and Lorenz's git must still be the agent's, with what it reports free of the git token.
 */
const TOKEN = 'lorenz-guard-token-5e1d7b2c';
const repoRoot = new URL('../../..', import.meta.url).pathname;
const agentBundle = join(repoRoot, 'dist/scripted-agent.mjs');
const realGit = spawnSync('bash', ['-c', 'type -P git'], { encoding: 'utf8' }).stdout.trim();

let runs = 0;
const fixture = gitServerPerFile('lorenz-cli-guard-', 'alice', TOKEN);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  events: { type: string; message: unknown }[];
  /** The agent's shell commands (scripted `@shell`), in order, with their output. */
  shells: { command: string; output: string; status: string }[];
  /** Completed or failed hooks by name: their output. */
  hooks: Record<string, string>;
}

interface RunSpec {
  repo: string;
  hooks: Record<string, string>;
  prompt: string[];
  /** The login profile of the run's HOME (~/.bash_profile), if any. */
  profile?: string;
  env?: Record<string, string>;
}

async function lorenzRun(spec: RunSpec): Promise<Run> {
  const dir = join(fixture.base, `run-${(runs += 1)}`);
  const home = join(dir, 'home');
  await mkdir(home, { recursive: true });
  if (spec.profile !== undefined) await writeFile(join(home, '.bash_profile'), spec.profile);
  const hooks = Object.entries(spec.hooks).map(
    ([name, text]) => `  ${name}: ${JSON.stringify(text)}`,
  );
  const workflow = join(dir, 'WORKFLOW.md');
  await writeFile(
    workflow,
    [
      '---',
      'workspace:',
      `  root: ${join(dir, 'ws')}`,
      '  git:',
      `    repo: ${fixture.server.repoUrl(spec.repo)}`,
      'agent:',
      '  kind: scripted',
      '  max_turns: 1',
      'agents:',
      '  scripted:',
      `    bridge_command: ${JSON.stringify(`${process.execPath} ${agentBundle}`)}`,
      'hooks:',
      ...hooks,
      '---',
      ...spec.prompt,
      '',
    ].join('\n'),
  );
  const issue = join(dir, 'issue.yaml');
  await writeFile(issue, 'identifier: ENG-7\ntitle: Guarded\nstate: Todo\n');
  const [command = '', ...prefix] = CLI_BINS[0]?.argv ?? [];
  // Asynchronously: the git server answers from this very process.
  const result = await new Promise<{ status: number | null; stdout: string; stderr: string }>(
    (resolve) => {
      const child = spawn(
        command,
        [
          ...prefix,
          'run',
          '--workflow',
          workflow,
          '--issue',
          issue,
          '--git-credentials',
          fixture.credentials,
        ],
        {
          cwd: dir,
          env: {
            // A PATH of the caller's own first: a login shell's profile drops it.
            PATH: `${join(dir, 'caller-bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
            HOME: home,
            LANG: 'C',
            GIT_SSL_CAINFO: fixture.server.caFile,
            GIT_CONFIG_NOSYSTEM: '1',
            ...spec.env,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    },
  );
  const events = result.stdout
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { type: string; message: unknown });
  const titles = new Map<string, string>();
  const shells: Run['shells'] = [];
  const hookOutput: Record<string, string> = {};
  for (const event of events) {
    const message = event.message as {
      update?: { sessionUpdate?: string; toolCallId?: string; title?: string; status?: string };
      hookName?: string;
      status?: string;
      output?: string;
    };
    const update = message?.update;
    if (update?.sessionUpdate === 'tool_call' && update.toolCallId) {
      titles.set(update.toolCallId, update.title ?? '');
    }
    if (update?.sessionUpdate === 'tool_call_update' && update.toolCallId) {
      const content = (update as { content?: { content?: { text?: string } }[] }).content;
      shells.push({
        command: titles.get(update.toolCallId) ?? '',
        output: (content?.[0]?.content?.text ?? '').trim(),
        status: update.status ?? '',
      });
    }
    if (event.type === 'hook_execution' && message.hookName && message.status !== 'started') {
      hookOutput[message.hookName] = message.output ?? '';
    }
  }
  return {
    code: result.status,
    stdout: result.stdout,
    stderr: result.stderr,
    events,
    shells,
    hooks: hookOutput,
  };
}

let repoCount = 0;
const newRepo = async (): Promise<string> => {
  const repo = `acme/guard-${(repoCount += 1)}`;
  await fixture.server.createRepo(repo, { private: true });
  return repo;
};

describe('lorenz run: the agent and the hooks after it get Lorenz’s git, whatever the login profile does', () => {
  it.each([
    { name: "Debian's /etc/profile alone (it sets PATH)", profile: undefined },
    {
      name: 'a ~/.bash_profile that sets PATH too',
      profile: `PATH=${dirname(realGit)}:/usr/bin:/bin\nexport PATH\n`,
    },
  ])(
    '$name',
    async ({ profile }) => {
      const repo = await newRepo();
      const mainSha = await fixture.server.branchSha(repo, 'main');
      const run = await lorenzRun({
        repo,
        ...(profile === undefined ? {} : { profile }),
        hooks: {
          after_run: 'command -v git; echo "$PATH"',
          before_remove: 'command -v git',
        },
        prompt: [
          '@shell command -v git',
          '@shell echo "$PATH"',
          '@shell git commit -q --allow-empty -m work',
          '@shell git -c core.hooksPath=/dev/null push origin HEAD:main',
          '@shell git push --no-verify',
          '@shell git push origin HEAD:main',
        ],
      });
      expect(run.code, run.stderr).toBe(0);
      const [which, path, commit, ...pushes] = run.shells;
      expect(which?.output).toMatch(/\/@lorenz-git\/[^/]+\/bin\/git$/);
      const wrapperDir = dirname(which?.output ?? '');
      // The profile's PATH is kept, after the wrapper's directory; the caller's own is gone.
      const profilePath = spawnSync('/bin/bash', ['-lc', 'echo "$PATH"'], {
        encoding: 'utf8',
        env: { PATH: '/nowhere:/usr/bin:/bin', HOME: join(fixture.base, `run-${runs}`, 'home') },
      }).stdout.trim();
      expect(path?.output).toBe(`${wrapperDir}:${profilePath}`);
      expect(commit?.status).toBe('completed');
      expect(pushes.map((push) => push.status)).toEqual(['failed', 'failed', 'failed']);
      for (const push of pushes) {
        expect(push.output, push.command).toMatch(
          /lorenz: (git_hooks_skip_refused|default_branch_refused)/,
        );
      }
      expect(await fixture.server.branchSha(repo, 'main')).toBe(mainSha);
      expect(await fixture.server.branchSha(repo, 'lorenz/eng-7-guarded')).toBeNull();
      expect(run.hooks.after_run).toBe(`${wrapperDir}/git\n${wrapperDir}:${profilePath}`);
      expect(run.hooks.before_remove).toBe(`${wrapperDir}/git`);
    },
    180_000,
  );
});

describe('lorenz run --git-credentials: the token is redacted from everything it prints', () => {
  const fill = () =>
    `printf 'protocol=https\\nhost=127.0.0.1:${fixture.server.port}\\n\\n' | git credential fill`;
  const OTHER_SECRET = 'an-extra-secret-3f9e';
  const half = TOKEN.length / 2;
  it.each([
    {
      name: 'hook output (whole, across output chunks, a failure), the agent’s tool output, stderr and messages',
      hooks: () => ({
        after_create: fill(),
        before_run: `printf %s '${TOKEN.slice(0, half)}'; sleep 0.3; printf '%s\\n' '${TOKEN.slice(half)}'; echo ${OTHER_SECRET}`,
        after_run: `echo ${TOKEN}; exit 3`,
      }),
      prompt: () => [`@shell ${fill()}`, `@stderr ${TOKEN}`, `@say here it is: ${TOKEN}`],
      code: 0,
    },
    {
      name: 'the failure of a fail-fast hook, in the summary and on stderr',
      hooks: () => ({ before_run: `cat ${join(fixture.credentials, '127.0.0.1')}; exit 4` }),
      prompt: () => ['@say never'],
      code: 1,
    },
  ])(
    '$name',
    async ({ hooks, prompt, code }) => {
      const run = await lorenzRun({
        repo: await newRepo(),
        hooks: hooks(),
        prompt: prompt(),
        env: { LORENZ_REDACT_EXTRA: OTHER_SECRET },
      });
      expect(run.code, run.stderr).toBe(code);
      for (const secret of [TOKEN, OTHER_SECRET, TOKEN.slice(0, half + 4)]) {
        expect(run.stdout).not.toContain(secret);
        expect(run.stderr).not.toContain(secret);
      }
      expect(run.stdout).toContain('[redacted]');
      if (code === 0) {
        expect(run.hooks.after_create).toContain('password=[redacted]');
        expect(run.hooks.before_run).toBe('[redacted]\n[redacted]');
        expect(run.shells[0]?.output).toContain('password=[redacted]');
        expect(run.stderr).toContain('[redacted]');
      } else {
        expect(run.stderr).toMatch(/slot 0 failed: .*alice:\[redacted\]/);
      }
    },
    180_000,
  );
});
