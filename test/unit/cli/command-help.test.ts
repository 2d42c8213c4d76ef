// `lorenz COMMAND --help`: each command's usage, its flags with their defaults, an example.
// The help is data (cli/command-help.ts); this test holds it equal to what each command's
// parser accepts: the same flags, short forms and defaults, so the help cannot drift.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_HELP, type CommandHelp } from '../../../src/cli/command-help.js';
import { COMMANDS } from '../../../src/cli/commands.js';
import { WORKSPACE_DIGEST_OPTIONS } from '../../../src/cli/digest-command.js';
import { ARCHIVE_API_FLAG } from '../../../src/cli/controller-command.js';
import { POLL_OPTIONS } from '../../../src/cli/poll-command.js';
import { RUN_OPTIONS } from '../../../src/cli/run-command.js';
import { APPROVE_OPTIONS } from '../../../src/cli/approve.js';
import { DESCRIBE_RUN_OPTIONS } from '../../../src/cli/runs/describe.js';
import { GET_RUNS_OPTIONS } from '../../../src/cli/runs/get-runs.js';
import { LOGS_OPTIONS } from '../../../src/cli/runs/logs.js';
import { SERVER_OPTIONS } from '../../../src/cli/server-command.js';
import { VALIDATE_OPTIONS } from '../../../src/cli/validate-command.js';
import { HOOK_RENDER_OPTIONS, PROMPT_RENDER_OPTIONS } from '../../../src/cli/workflow-commands.js';
import { CONTROLLER_OPTIONS } from '../../../src/controller/main.js';
import { RUNNER_OPTIONS } from '../../../src/runner/main.js';
import { CLI_BINS, runCli } from '../../support/cli-bins.js';

interface ParserOption {
  type: 'string' | 'boolean';
  short?: string;
  default?: string | boolean;
}
type Parser = Readonly<Record<string, ParserOption>>;

/** Each command's parser options; the controller's read-API flag is taken out before it. */
const PARSERS: Record<string, Parser> = {
  'workflow validate': VALIDATE_OPTIONS,
  'prompt render': PROMPT_RENDER_OPTIONS,
  'hook render': HOOK_RENDER_OPTIONS,
  'workspace digest': WORKSPACE_DIGEST_OPTIONS,
  run: RUN_OPTIONS,
  poll: POLL_OPTIONS,
  runner: RUNNER_OPTIONS,
  controller: { ...CONTROLLER_OPTIONS, [ARCHIVE_API_FLAG.slice(2)]: { type: 'string' } },
  'get runs': GET_RUNS_OPTIONS,
  logs: LOGS_OPTIONS,
  'describe run': DESCRIBE_RUN_OPTIONS,
  approve: APPROVE_OPTIONS,
  server: SERVER_OPTIONS,
  completion: {},
};

/** A parser's flags as the help shows them: name, short, value or not, string default. */
const fromParser = (parser: Parser) =>
  Object.entries(parser)
    .map(([name, option]) => ({
      name,
      short: option.short,
      takesValue: option.type === 'string',
      default: typeof option.default === 'string' ? option.default : undefined,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
const fromHelp = (help: CommandHelp) =>
  help.flags
    .map((flag) => ({
      name: flag.name,
      short: flag.short,
      takesValue: flag.value !== undefined,
      default: flag.default,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));

const commands = Object.keys(COMMANDS);

describe('the help of each command', () => {
  it('every command has help, and help names no command that does not exist', () => {
    expect(Object.keys(COMMAND_HELP).sort()).toEqual([...commands].sort());
    expect(Object.keys(PARSERS).sort()).toEqual([...commands].sort());
  });

  it.each(commands)('%s: the help lists exactly the flags the parser takes', (words) => {
    const help = COMMAND_HELP[words];
    const parser = PARSERS[words];
    expect(help && parser).toBeTruthy();
    expect(fromHelp(help!)).toEqual(fromParser(parser!));
  });
});

const dir = mkdtempSync(join(tmpdir(), 'lorenz-command-help-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.each(CLI_BINS)('lorenz COMMAND --help through $name', (bin) => {
  it.each(commands)(
    '`lorenz %s --help` prints its usage, each flag, the defaults and an example',
    (words) => {
      const help = COMMAND_HELP[words]!;
      const result = runCli(bin, [...words.split(' '), '--help'], dir);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`usage: lorenz ${help.usage}`);
      for (const flag of help.flags) {
        const flagLines = result.stdout.slice(result.stdout.indexOf('\nflags:\n')).split('\n');
        const line = flagLines.find(
          (text) => text.includes(`--${flag.name} `) || text.endsWith(`--${flag.name}`),
        );
        expect(line, `--${flag.name}`).toBeDefined();
        if (flag.short) expect(line).toContain(`-${flag.short}, `);
        if (flag.default !== undefined) expect(line).toContain(`(default: ${flag.default})`);
      }
      expect(result.stdout).toContain(`example:\n  ${help.example}`);
    },
  );

  it('`lorenz completion fish` is refused with the shells it knows', () => {
    const result = runCli(bin, ['completion', 'fish'], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("completion takes one shell, bash or zsh, got 'fish'");
  });
});

/** What the bash completion offers for a command line ending in the word being completed. */
function complete(script: string, line: string[]): string[] {
  const file = join(dir, 'completion.bash');
  writeFileSync(file, script);
  const words = line.map((word) => `'${word}'`).join(' ');
  const program = `source ${file}; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _lorenz; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['-c', program], { cwd: dir, encoding: 'utf8' });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout.split('\n').filter(Boolean).sort();
}

describe('shell completion', () => {
  const bash = runCli(CLI_BINS[0]!, ['completion', 'bash'], dir).stdout;

  it.each<[string, string[], string[]]>([
    ['the first words', ['lorenz', 'wo'], ['workflow', 'workspace']],
    ['a second word', ['lorenz', 'get', ''], ['runs']],
    ['the flags of a one-word command', ['lorenz', 'poll', '--d'], ['--dry-run']],
    [
      'the flags of a two-word command',
      ['lorenz', 'get', 'runs', '--all'],
      ['--all', '--all-namespaces'],
    ],
    ['short flags', ['lorenz', 'logs', 'eng-1', '-f'], ['-f']],
    ['a file for a flag that takes one', ['lorenz', 'run', '--workflow', 'WORK'], ['WORKFLOW.md']],
    ['the shells of completion', ['lorenz', 'completion', ''], ['bash', 'zsh']],
  ])('bash: %s', (_name, line, want) => {
    writeFileSync(join(dir, 'WORKFLOW.md'), '');
    expect(complete(bash, line)).toEqual(want);
  });

  it('every flag of every command is offered', () => {
    for (const [words, help] of Object.entries(COMMAND_HELP)) {
      const offered = complete(bash, ['lorenz', ...words.split(' '), '--']);
      for (const flag of help.flags) expect(offered, words).toContain(`--${flag.name}`);
    }
  });

  it('zsh: the same function through bashcompinit, registered for lorenz', () => {
    const zsh = runCli(CLI_BINS[0]!, ['completion', 'zsh'], dir).stdout;
    expect(zsh.startsWith('#compdef lorenz\n')).toBe(true);
    expect(zsh).toContain('bashcompinit');
    expect(zsh).toContain(bash.split('\n').slice(1).join('\n'));
    const syntax = spawnSync('bash', ['-n'], { input: zsh, encoding: 'utf8' });
    expect(syntax.status, syntax.stderr).toBe(0);
  });
});
