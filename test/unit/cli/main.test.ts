import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliSandbox } from '../../support/cli-bins.js';

const cli = cliSandbox('lorenz-cli-');
const { dir, lorenz, file } = cli;

const issue = file(
  'issue.yaml',
  'identifier: feat/login\ntitle: "Say $(touch pwned) `id` \'hi\'"\nstate: Todo\nlabels: [Backend]\n',
);

function workflow(name: string, hooks: string, body = ''): string {
  return file(name, `---\nworkspace:\n  root: ${join(dir, 'ws')}\n${hooks}---\n${body}`);
}

cli.eachBin(() => {
  describe('lorenz workflow validate', () => {
    it('prints a one-line summary and exits 0 for a valid workflow', () => {
      const path = workflow('ok.md', 'hooks:\n  before_run: "true"\n');
      const result = lorenz('workflow', 'validate', path);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/valid \(tracker memory, agent codex, hooks before_run,/);
      expect(result.stdout.trim().split('\n')).toHaveLength(1);
    });

    it('exits 2 with the stable code and the key path for an invalid config', () => {
      const path = workflow('bad.md', 'hooks:\n  timeout_ms: -1\n');
      const result = lorenz('workflow', 'validate', path);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        /^lorenz: invalid_workflow_config: \S+bad\.md:5: hooks\.timeout_ms: /,
      );
    });

    it('exits 2 naming a missing file', () => {
      const result = lorenz('workflow', 'validate', join(dir, 'nope.md'));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('missing_workflow_file');
      expect(result.stderr).toContain('nope.md');
    });

    it('warns about unknown keys on stderr but still validates', () => {
      const path = file('unknown.md', '---\ntracker:\n  kind: memory\n  colour: blue\n---\nhi');
      const result = lorenz('workflow', 'validate', path);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain('tracker.colour');
    });

    it('exits 2 with usage for unknown commands and missing options', () => {
      expect(lorenz('frobnicate').code).toBe(2);
      const missing = lorenz('prompt', 'render', '--issue', issue);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--workflow');
    });

    it.each([
      ['run', '--help'],
      ['controller', '--help'],
      ['workflow', 'validate', '-h'],
    ])("`lorenz %s %s` prints that command's usage and exits 0", (...args: string[]) => {
      const result = lorenz(...args);
      const words = args.filter((arg) => !arg.startsWith('-')).join(' ');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`usage: lorenz ${words}`);
      expect(result.stdout).toContain('example:');
      expect(result.stderr).toBe('');
    });

    it('`lorenz --help` prints every command', () => {
      const result = lorenz('--help');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('lorenz controller [--kubeconfig F]');
      expect(result.stdout).toContain('--tools-bind-address ADDR');
      expect(result.stdout).toContain('lorenz completion bash|zsh');
    });
  });

  describe('lorenz prompt render', () => {
    it('renders the default prompt for a blank body', () => {
      const path = workflow('blank.md', '');
      const result = lorenz('prompt', 'render', '--workflow', path, '--issue', issue);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Identifier: feat/login');
      expect(result.stdout).toContain('No description provided.');
    });

    it('passes attempt and ensemble slot into the template', () => {
      const path = workflow(
        'slots.md',
        '',
        'slot {{ ensemble.slot_index | plus: 1 }}/{{ ensemble.size }} {{ ensemble.enabled }} attempt {{ attempt }}',
      );
      const result = lorenz(
        'prompt',
        'render',
        '--workflow',
        path,
        '--issue',
        issue,
        '--attempt',
        '3',
        '--slot',
        '1',
        '--size',
        '2',
      );
      expect(result.stdout.trim()).toBe('slot 2/2 true attempt 3');
    });

    it('fails a strict-mode typo with the Liquid message', () => {
      const path = workflow('typo.md', '', '{{ issue.titel }}');
      const result = lorenz('prompt', 'render', '--workflow', path, '--issue', issue);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('issue.titel');
    });

    it('rejects an issue file without an identifier, naming the file', () => {
      const bad = file('bad-issue.yaml', 'title: x\n');
      const path = workflow('p.md', '');
      const result = lorenz('prompt', 'render', '--workflow', path, '--issue', bad);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `invalid_issue: issue file ${bad}: key "identifier" is required`,
      );
    });
  });

  describe('lorenz hook render', () => {
    it('prints the command with issue values shell-escaped', () => {
      const path = workflow(
        'hook.md',
        'hooks:\n  after_create: "git checkout -b {{ issue.identifier }} && echo {{ issue.title }}"\n',
      );
      const result = lorenz(
        'hook',
        'render',
        '--workflow',
        path,
        '--hook',
        'after_create',
        '--issue',
        issue,
      );
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(
        "git checkout -b 'feat/login' && echo 'Say $(touch pwned) `id` '\\''hi'\\'''\n",
      );
    });
  });

  describe('lorenz run --no-agent', () => {
    it('runs the four hooks in order, prints JSON lines, removes the workspace, exits 0', () => {
      const path = workflow(
        'run.md',
        [
          'hooks:',
          '  after_create: "printf %s {{ issue.title }} > title.txt"',
          '  before_run: "cat title.txt"',
          '  after_run: "exit 7"',
          '  before_remove: "ls"',
          '',
        ].join('\n'),
      );
      const result = lorenz('run', '--workflow', path, '--issue', issue, '--no-agent');
      expect(result.code).toBe(0);
      const events = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      const hooks = events
        .filter((e) => e.type === 'hook_execution' && e.message.status !== 'started')
        .map((e) => [e.message.hookName, e.message.status]);
      expect(hooks).toEqual([
        ['after_create', 'completed'],
        ['before_run', 'completed'],
        ['after_run', 'failed'],
        ['before_remove', 'completed'],
      ]);
      const beforeRun = events.find(
        (e) =>
          e.type === 'hook_execution' &&
          e.message.hookName === 'before_run' &&
          e.message.status === 'completed',
      );
      expect(beforeRun.message.output).toBe("Say $(touch pwned) `id` 'hi'");
      // Streamed too, between the hook's started record and its end (seq 1: the second run).
      const kinds = events.map((e) =>
        e.type === 'hook_execution' ? `${e.message.hookName}:${e.message.status}` : e.type,
      );
      const streamed = kinds.indexOf('hook_output');
      expect(kinds.slice(streamed - 1, streamed + 2)).toEqual([
        'before_run:started',
        'hook_output',
        'before_run:completed',
      ]);
      expect(events[streamed].message).toEqual({
        hookName: 'before_run',
        slot: 0,
        seq: 1,
        text: "Say $(touch pwned) `id` 'hi'",
      });
      expect(result.stderr).toContain('Ignoring after_run hook failure');
      expect(events.at(-1).type).toBe('run_completed');
      expect(existsSync(join(dir, 'ws', 'feat_login'))).toBe(false);
      expect(existsSync(join(dir, 'ws', 'feat_login', 'pwned'))).toBe(false);
    });

    it('exits 1 when a fail-fast hook fails, still runs after_run (the attempt began) and cleans up', () => {
      const path = workflow(
        'fail.md',
        'hooks:\n  before_run: "echo broken; exit 4"\n  after_run: "touch ../after-run-ran"\n',
      );
      const result = lorenz('run', '--workflow', path, '--issue', issue, '--no-agent');
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('hook failed with status 4: broken');
      expect(existsSync(join(dir, 'ws', 'after-run-ran'))).toBe(true);
      const summary = JSON.parse(result.stdout.trim().split('\n').at(-1) as string);
      expect(summary.message.succeeded).toBe(false);
    });

    it('runs one lifecycle per ensemble slot', () => {
      const many = file(
        'ensemble-issue.yaml',
        'identifier: ENG-9\ntitle: t\nlabels: ["ensemble:3"]\n',
      );
      const path = workflow('ens.md', 'hooks:\n  after_create: "pwd >> ../../slots.txt"\n');
      // Each bin's pass starts from no file: the hooks append.
      rmSync(join(dir, 'ws', 'slots.txt'), { force: true });
      const result = lorenz('run', '--workflow', path, '--issue', many, '--no-agent');
      expect(result.code).toBe(0);
      const slots = readFileSync(join(dir, 'ws', 'slots.txt'), 'utf8')
        .trim()
        .split('\n')
        .sort();
      expect(slots).toEqual([0, 1, 2].map((slot) => join(dir, 'ws', 'ENG-9', String(slot))));
    });

    it('leaves no process alive: a daemon a hook started ends with the run', () => {
      const marker = `lorenz-daemon-${process.pid}-${Date.now()}`;
      const path = workflow(
        'daemon.md',
        `hooks:\n  before_run: "(exec -a ${marker} sleep 600 > /dev/null 2>&1 &) ; echo started"\n  after_run: "pgrep -f ${marker} > /dev/null && echo daemon-alive"\n`,
      );
      const result = lorenz('run', '--workflow', path, '--issue', issue, '--no-agent');
      expect(result.code).toBe(0);
      // The daemon lived through the run (after_run saw it) …
      expect(result.stdout).toContain('daemon-alive');
      // … and is gone once `lorenz run` has exited.
      expect(spawnSync('pgrep', ['-f', marker]).status).toBe(1);
    });
  });
});
