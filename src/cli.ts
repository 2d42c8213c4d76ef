import { isLorenzError, type LorenzErrorCode } from './workflow/errors.js';
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
  runner: async () => (await import('./cli/operator-commands.js')).runnerCommand,
  controller: async () => (await import('./cli/operator-commands.js')).controllerCommand,
};

/**
 * Exit codes: 2 for usage and for invalid workflows/issues, 1 for anything else that failed.
 * No default: a new code does not compile until it is placed here.
 */
function exitCodeForError(code: LorenzErrorCode): 1 | 2 {
  switch (code) {
    case 'missing_workflow_file':
    case 'workflow_parse_error':
    case 'workflow_front_matter_not_a_map':
    case 'invalid_workflow_config':
    case 'template_parse_error':
    case 'invalid_issue':
      return 2;
    case 'template_render_error':
    case 'invalid_workspace_cwd':
    case 'workspace_is_root':
    case 'workspace_unsafe_symlink':
    case 'workspace_outside_root':
    case 'workspace_skill_source_symlink':
    case 'workspace_skill_source_unsupported':
    case 'workspace_skill_source_missing':
    case 'invalid_ssh_timeout':
    case 'hook_failed':
    case 'hook_timed_out':
    case 'hook_killed':
    case 'agent_bridge_missing':
    case 'agent_bridge_exited':
    case 'agent_protocol_error':
    case 'agent_response_timeout':
    case 'acp_turn_failed':
    case 'turn_timeout':
    case 'turn_stalled':
    case 'turn_cancelled':
    case 'turn_input_required':
    case 'approval_required':
    case 'issue_state_unavailable':
    case 'unsupported_tracker_kind':
    case 'invalid_tracker_config':
    case 'missing_tracker_secret':
    case 'tracker_request':
    case 'tracker_status':
    case 'tracker_response':
    case 'tracker_pagination':
    case 'tracker_rate_limited':
    case 'input_digest_mismatch':
    case 'invalid_pod_template':
      return 1;
  }
}

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
    err(`lorenz: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}

const exitCode = await main(process.argv.slice(2));
// Let stdout drain before exiting; the run command has already waited for every child.
process.exitCode = exitCode;
