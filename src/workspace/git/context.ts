import type { Executor } from '../../executor/types.js';
import type { GitWorkspaceConfig } from '../../workflow/config.js';
import type { EventSink, GitStep, GitWorkspaceMessage } from '../../workflow/events.js';
import type { CommandContext } from './commands.js';
import type { ResolvedRemote } from './repo-and-branch.js';

/** What every step of a git workspace works with. */
export interface GitWorkspaceOptions {
  executor: Executor;
  emit: EventSink;
  git: GitWorkspaceConfig;
  remote: ResolvedRemote;
  branch: string;
  root: string;
  workspace: string;
  slot: number;
  env: NodeJS.ProcessEnv;
  /** Bound on each git command and each setup step (hooks.timeout_ms). */
  timeoutMs: number;
  signal: AbortSignal;
  /** The credentials directory the helper reads; absent: every remote is anonymous. */
  credentialsDirectory?: string | undefined;
}

export function report(
  options: GitWorkspaceOptions,
  step: GitStep,
  status: GitWorkspaceMessage['status'],
  detail: string,
  startedAt: number,
  code?: GitWorkspaceMessage['code'],
  commits?: GitWorkspaceMessage['commits'],
): void {
  options.emit({
    type: 'git_workspace',
    message: {
      step,
      status,
      branch: options.branch,
      detail,
      ...(code ? { code } : {}),
      ...(commits ? { commits } : {}),
      durationMs: Date.now() - startedAt,
      slot: options.slot,
    },
  });
}

export function commandContext(
  options: GitWorkspaceOptions,
  cwd = options.workspace,
): CommandContext {
  return {
    executor: options.executor,
    cwd,
    env: options.env,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
  };
}
