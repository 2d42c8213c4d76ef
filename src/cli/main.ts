import { isLorenzError, withCode } from '../workflow/errors.js';
import { markStartup } from '../workflow/startup-marks.js';
import { COMMAND_HELP, formatCommandHelp } from './command-help.js';
import { exitCodeForError } from './exit-codes.js';
import { writeStdout } from './stdout.js';
import { UsageError, USAGE } from './usage.js';

/** One subcommand: its arguments after the command words, and where to write. */
export type Command = (
  args: string[],
  out: (s: string) => void,
  err: (s: string) => void,
) => Promise<number>;

/** Each subcommand, by its words, and how to load it. */
export type CommandTable = Readonly<Record<string, () => Promise<Command>>>;

function findCommand(
  argv: string[],
  commands: CommandTable,
): { load: () => Promise<Command>; words: string; rest: string[] } | null {
  const two = argv.slice(0, 2).join(' ');
  if (commands[two]) return { load: commands[two], words: two, rest: argv.slice(2) };
  const one = argv[0] ?? '';
  if (commands[one]) return { load: commands[one], words: one, rest: argv.slice(1) };
  return null;
}

/** The whole CLI; `commands` is how the snapshot entry swaps in its preloaded commands. */
/**
 * The `lorenz` command with a table of its subcommands: the plain entry's (commands.ts) loads
 * each on demand; the snapshot entry's has them in the heap already.
 */
export async function main(argv: string[], commands: CommandTable): Promise<number> {
  markStartup('main');
  const out = (s: string): void => writeStdout(s);
  const err = (s: string): void => void process.stderr.write(s);
  if (argv[0] === '--version') {
    out('lorenz 0.1.0\n');
    return 0;
  }
  if (argv[0] === '--help' || argv[0] === 'help' || argv.length === 0) {
    (argv.length === 0 ? err : out)(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv, commands);
  if (!found) {
    err(`lorenz: unknown command '${argv.slice(0, 2).join(' ')}'\n${USAGE}\n`);
    return 2;
  }
  // `lorenz run --help`: what a user tries first; an option parser would call it unknown.
  if (found.rest.includes('--help') || found.rest.includes('-h')) {
    const help = COMMAND_HELP[found.words];
    out(`${help ? formatCommandHelp(found.words, help) : USAGE}\n`);
    return 0;
  }
  try {
    const command = await found.load();
    markStartup('command_loaded');
    return await command(found.rest, out, err);
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      err(`lorenz: ${(error as Error).message}\n${USAGE}\n`);
      return 2;
    }
    if (isLorenzError(error)) {
      err(`lorenz: ${withCode(error.code, error.message)}\n`);
      return exitCodeForError(error.code);
    }
    // Not one of ours: still one line. The stack is for whoever debugs Lorenz itself.
    const debug = process.env.LORENZ_DEBUG === '1';
    const text = error instanceof Error ? (debug ? error.stack : error.message) : String(error);
    const hint = debug ? '' : ' (LORENZ_DEBUG=1 shows the stack trace)';
    err(`lorenz: unexpected error: ${debug ? text : (text ?? '').split('\n')[0]}${hint}\n`);
    return 1;
  }
}
