import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliSandbox } from '../../support/cli-bins.js';
import { UNSOUND_YAML } from '../../support/yaml-bomb.js';

// Every failure at the boundary of `lorenz` is one line, `lorenz: <code>: <what>`, that names
// the file and what was wrong: never a stack trace, never the library's own wording.
const cli = cliSandbox('lorenz-cli-errors-');
const { dir, lorenz, file } = cli;

function expectOneLine(stderr: string, expected: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr.trimEnd().split('\n')).toEqual([expected]);
}

const workflowFile = file('wf.md', `---\nworkspace:\n  root: ${join(dir, 'ws')}\n---\nHi\n`);
mkdirSync(join(dir, 'a-directory'));
symlinkSync('loop-b', join(dir, 'loop-a'));
symlinkSync('loop-a', join(dir, 'loop-b'));
const longName = 'n'.repeat(5000);
const shownLong = `${'n'.repeat(120)}… (5000 characters)`;

cli.eachBin(() => {
  describe('a file that cannot be read', () => {
    const unreadable: [string, string, string][] = [
      ['a directory', 'a-directory', 'it is a directory, not a file (EISDIR)'],
      ['a symlink loop', 'loop-a', 'too many levels of symbolic links (a symlink loop) (ELOOP)'],
      [
        'a 5000-character name',
        longName,
        'the name is too long for the file system (ENAMETOOLONG)',
      ],
    ];

    it.each(unreadable)('--workflow %s: file_unreadable, exit 2', (_name, path, reason) => {
      const result = lorenz('workflow', 'validate', path);
      expect(result.code).toBe(2);
      const shown = path === longName ? shownLong : path;
      expectOneLine(
        result.stderr,
        `lorenz: file_unreadable: cannot read workflow file ${shown}: ${reason}`,
      );
    });

    it.each(unreadable)('--issue %s: file_unreadable, exit 2', (_name, path, reason) => {
      const result = lorenz('prompt', 'render', '--workflow', workflowFile, '--issue', path);
      expect(result.code).toBe(2);
      const shown = path === longName ? shownLong : path;
      expectOneLine(
        result.stderr,
        `lorenz: file_unreadable: cannot read issue file ${shown}: ${reason}`,
      );
    });
  });

  describe('YAML that does not hold', () => {
    it.each(UNSOUND_YAML)('front matter with %s: workflow_parse_error', (_name, yaml, reason) => {
      const path = file('yaml.md', `---\n${yaml}\n---\nHi\n`);
      const result = lorenz('workflow', 'validate', path);
      expect(result.code).toBe(2);
      expectOneLine(
        result.stderr,
        `lorenz: workflow_parse_error: ${path}: invalid YAML front matter: ${reason}`,
      );
    });

    it.each(UNSOUND_YAML)('an issue file with %s: invalid_issue', (_name, yaml, reason) => {
      const path = file('yaml-issue.yaml', `identifier: X\ntitle: t\n${yaml}`);
      const result = lorenz('prompt', 'render', '--workflow', workflowFile, '--issue', path);
      expect(result.code).toBe(2);
      expectOneLine(
        result.stderr,
        `lorenz: invalid_issue: issue file ${path}: invalid YAML: ${reason}`,
      );
    });

    it('an issue file with a syntax error names the line', () => {
      const path = file('syntax.yaml', 'identifier: A\ntitle: [unclosed\n');
      const result = lorenz('prompt', 'render', '--workflow', workflowFile, '--issue', path);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(
          `^lorenz: invalid_issue: issue file ${path}: invalid YAML at line \\d+, column \\d+: `,
        ),
      );
    });
  });

  describe('an issue that is not an issue', () => {
    it.each([
      ['title: t\n', 'key "identifier" is required'],
      ['identifier: [A]\ntitle: t\n', 'key "identifier" must be a string, not a list'],
      ['identifier: A\ntitle: t\nlabels: backend\n', 'key "labels" must be a list, not a string'],
    ])('%j: %s', (text, message) => {
      const path = file('bad.yaml', text);
      const result = lorenz('run', '--no-agent', '--workflow', workflowFile, '--issue', path);
      expect(result.code).toBe(2);
      expectOneLine(result.stderr, `lorenz: invalid_issue: issue file ${path}: ${message}`);
    });
  });

  describe('lorenz workflow validate parses every hook template', () => {
    it.each([
      [
        'after_create',
        'git clone x {{ issue.identifier',
        /^output "\{\{ issue\.identifier" not closed/,
      ],
      [
        'before_run',
        'echo {{ issue.title | no_such_filter }}',
        /^undefined filter: no_such_filter/,
      ],
      ['after_run', '{% if issue.title %}echo', /^tag \{% if issue\.title %\} not closed/],
      ['before_remove', 'echo {{ issue.id }} {% endfor %}', /endfor/],
    ])('reports a broken %s template, naming the hook', (hook, command, liquid) => {
      const path = file('hook.md', `---\nhooks:\n  ${hook}: ${JSON.stringify(command)}\n---\nHi\n`);
      const result = lorenz('workflow', 'validate', path);
      expect(result.code).toBe(2);
      expect(result.stderr).not.toMatch(/^\s+at /m);
      const prefix = `lorenz: template_parse_error: ${path}:3: hooks.${hook}: `;
      expect(result.stderr.startsWith(prefix)).toBe(true);
      expect(result.stderr.slice(prefix.length)).toMatch(liquid);
    });

    it('leaves a command that is not a template alone, as the run does', () => {
      const path = file(
        'verbatim.md',
        '---\nhooks:\n  before_run: "echo {{ not liquid"\n---\nHi\n',
      );
      expect(lorenz('workflow', 'validate', path).code).toBe(0);
    });
  });

  describe('a signal to lorenz run during a hook', () => {
    const issue = file('signal-issue.yaml', 'identifier: SIG-1\ntitle: t\nstate: Todo\n');

    /** Start a run, send the signals once before_run has started, collect what it reported. */
    function runAndSignal(signals: NodeJS.Signals[]) {
      const path = file(
        'signal.md',
        `---\nworkspace:\n  root: ${join(dir, 'ws')}\nhooks:\n  before_run: sleep 30\n  after_run: sleep 0.5; echo after-ran\n---\nHi\n`,
      );
      // Through the launcher too: it execs node, so the signal reaches the run itself.
      const [command = '', ...prefix] = cli.bin.argv;
      const child = spawn(
        command,
        [...prefix, 'run', '--no-agent', '--workflow', path, '--issue', issue],
        { cwd: dir, env: { ...process.env, ...cli.bin.env } },
      );
      let stdout = '';
      let stderr = '';
      let sent = false;
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (!sent && stdout.includes('"status":"started","hookName":"before_run"')) {
          sent = true;
          // The second signal lands while after_run is running: it must not cut cleanup short.
          signals.forEach((signal, index) =>
            setTimeout(() => child.kill(signal), 100 + index * 300),
          );
        }
      });
      return new Promise<{
        code: number | null;
        events: { type: string; message: Record<string, unknown> }[];
        stderr: string;
      }>((resolve) =>
        child.on('close', (code) =>
          resolve({
            code,
            stderr,
            events: stdout
              .trim()
              .split('\n')
              .map((line) => JSON.parse(line)),
          }),
        ),
      );
    }

    it.each([
      [['SIGTERM']],
      [['SIGINT']],
      [['SIGINT', 'SIGINT', 'SIGTERM']],
    ] as NodeJS.Signals[][][])(
      '%j: cancelled, not a timeout; after_run and cleanup still run',
      async (signals) => {
        const { code, events, stderr } = await runAndSignal(signals);
        expect(code).toBe(1);
        const hooks = events.filter(
          (e) => e.type === 'hook_execution' && e.message.status !== 'started',
        );
        expect(hooks.map((e) => [e.message.hookName, e.message.status])).toEqual([
          ['before_run', 'failed'],
          ['after_run', 'completed'],
        ]);
        expect(hooks[0]?.message.error).toMatch(/cancelled/);
        expect(hooks[0]?.message.error).not.toMatch(/timed out/);
        const summary = events.at(-1);
        expect(summary?.type).toBe('run_completed');
        expect(summary?.message.slots).toEqual([
          expect.objectContaining({ errorCode: 'cancelled' }),
        ]);
        expect(stderr).toContain(`lorenz: cancelled by ${signals[0]}`);
        expect(stderr).not.toMatch(/^\s+at /m);
      },
    );

    it('stdout closed by its reader (`| head`): cancelled like Ctrl-C, no crash, cleanup runs', async () => {
      const marker = join(dir, 'before-remove-ran');
      const path = file(
        'sigpipe.md',
        `---\nworkspace:\n  root: ${join(dir, 'ws-pipe')}\nhooks:\n  after_create: sleep 1\n  before_run: sleep 30\n  before_remove: touch ${marker}\n---\nHi\n`,
      );
      const [command = '', ...prefix] = cli.bin.argv;
      const started = performance.now();
      const child = spawn(
        command,
        [...prefix, 'run', '--no-agent', '--workflow', path, '--issue', issue],
        { cwd: dir, env: { ...process.env, ...cli.bin.env } },
      );
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      // Like `head -1`: read the first line, then close the pipe. The next event written
      // (after_create's end, a second later) meets EPIPE.
      child.stdout.once('data', () => child.stdout.destroy());
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(stderr).toContain('lorenz: SIGPIPE: cancelling the run');
      expect(stderr).toContain('lorenz: cancelled by SIGPIPE');
      expect(stderr).not.toMatch(/EPIPE|Unhandled|^\s+at /m);
      expect(code).toBe(1);
      expect(performance.now() - started).toBeLessThan(20_000);
      expect(existsSync(marker)).toBe(true);
      expect(existsSync(join(dir, 'ws-pipe', 'SIG-1'))).toBe(false);
    });
  });

  describe('lorenz run: agent.skills', () => {
    it('resolves a relative skills path against the WORKFLOW.md directory, not the cwd', () => {
      mkdirSync(join(dir, 'project', 'skills', 'review'), { recursive: true });
      writeFileSync(join(dir, 'project', 'skills', 'review', 'SKILL.md'), 'review skill');
      const path = join(dir, 'project', 'WORKFLOW.md');
      writeFileSync(
        path,
        `---\nworkspace:\n  root: ${join(dir, 'ws')}\nagent:\n  skills: [skills/review]\nhooks:\n  before_run: cat .lorenz/skills/review/SKILL.md\n---\nHi\n`,
      );
      const issue = file('skills-issue.yaml', 'identifier: SK-1\ntitle: t\n');
      const result = lorenz('run', '--no-agent', '--workflow', path, '--issue', issue);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('"output":"review skill"');
    });
  });
});
