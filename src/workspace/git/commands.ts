import type { CommandResult, Executor } from '../../executor/types.js';
import { shellEscape } from '../../template/shell-escape.js';
import { OUTPUT_LIMIT } from '../output.js';

/**
 * Running git (and a repository's setup steps) through the executor, so a git workspace
 * works wherever hooks do: this machine, a run Pod, a remote worker. Every argument is
 * quoted: nothing from a Workflow, an issue or a repository is read by a shell.
 */
export interface CommandContext {
  executor: Executor;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal;
}

/** One command line from argv: each word quoted. */
export const commandLine = (argv: readonly string[]): string => argv.map(shellEscape).join(' ');

/** Git never prompts for a password here: a missing credential is an error, not a hang. */
export function gitEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, GIT_TERMINAL_PROMPT: '0', GCM_INTERACTIVE: 'never' };
}

/** Runs several argv lines as one `&&` chain (one shell start instead of one per command). */
export function runSteps(
  context: CommandContext,
  steps: readonly (readonly string[])[],
): Promise<CommandResult> {
  return context.executor.runCommand(steps.map(commandLine).join(' && '), {
    cwd: context.cwd,
    timeoutMs: context.timeoutMs,
    env: gitEnvironment(context.env),
    outputLimit: OUTPUT_LIMIT,
    signal: context.signal,
  });
}

export const git = (context: CommandContext, ...args: string[]): Promise<CommandResult> =>
  runSteps(context, [['git', ...args]]);

/** Where origin's `branch` is kept in the clone. */
export const trackingRef = (branch: string): string => `refs/remotes/origin/${branch}`;

/** The fetch of origin's `branch`, `depth` commits deep, into its tracking ref. */
export const fetchBranch = (depth: number, branch: string): string[] => [
  'git',
  'fetch',
  '--depth',
  String(depth),
  'origin',
  `+refs/heads/${branch}:${trackingRef(branch)}`,
];

export const succeeded = (result: CommandResult): boolean => result.exitCode === 0;

/** Why a command failed, in a line: the start of its output, or how it was stopped. */
export function failureOf(result: CommandResult, timeoutMs: number, length = 400): string {
  if (result.cancelled) return 'cancelled';
  if (result.timedOut) return `timed out after ${timeoutMs}ms`;
  if (result.spawnError !== undefined) return `could not start: ${result.spawnError}`;
  const output = result.output.trim().replace(/\s+/g, ' ');
  const head = output.length > length ? `${output.slice(0, length)}…` : output;
  const status =
    result.exitCode === null ? `killed by ${result.signal}` : `exited ${result.exitCode}`;
  return head === '' ? status : `${status}: ${head}`;
}
