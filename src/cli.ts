import { isLorenzError } from './workflow/errors.js';
import { exitCodeForError } from './cli/exit-codes.js';
import { UsageError, USAGE } from './cli/usage.js';

/**
 * The `lorenz` command. Each subcommand is imported on demand, so `lorenz run` never loads
 * the Kubernetes client and starts in a few tens of milliseconds.
 */
type Command = (
  args: string[],
  out: (s: string) => void,
  err: (s: string) => void,
) => Promise<number>;

const COMMANDS: Record<string, () => Promise<Command>> = {
  'workflow validate': async () => (await import('./cli/workflow-commands.js')).validateCommand,
  'prompt render': async () => (await import('./cli/workflow-commands.js')).promptRenderCommand,
  'hook render': async () => (await import('./cli/workflow-commands.js')).hookRenderCommand,
  run: async () => (await import('./cli/run-command.js')).runCommand,
  poll: async () => (await import('./cli/poll-command.js')).pollCommand,
  runner: async () => (await import('./cli/operator-commands.js')).runnerCommand,
  controller: async () => (await import('./cli/operator-commands.js')).controllerCommand,
};

function findCommand(argv: string[]): { load: () => Promise<Command>; rest: string[] } | null {
  const two = argv.slice(0, 2).join(' ');
  if (COMMANDS[two]) return { load: COMMANDS[two], rest: argv.slice(2) };
  const one = argv[0] ?? '';
  if (COMMANDS[one]) return { load: COMMANDS[one], rest: argv.slice(1) };
  return null;
}

export async function main(argv: string[]): Promise<number> {
  const out = (s: string): void => void process.stdout.write(s);
  const err = (s: string): void => void process.stderr.write(s);
  if (argv[0] === '--version') {
    out('lorenz 0.1.0\n');
    return 0;
  }
  if (argv[0] === '--help' || argv[0] === 'help' || argv.length === 0) {
    (argv.length === 0 ? err : out)(`${USAGE}\n`);
    return argv.length === 0 ? 2 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    err(`lorenz: unknown command '${argv.slice(0, 2).join(' ')}'\n${USAGE}\n`);
    return 2;
  }
  try {
    const command = await found.load();
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
      err(`lorenz: ${error.code}: ${error.message}\n`);
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

const exitCode = await main(process.argv.slice(2));
// Let stdout drain before exiting; the run command has already waited for every child.
process.exitCode = exitCode;
