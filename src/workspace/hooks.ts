import { describeSpawnFailure, oversizedArgument } from '../executor/exec-limits.js';
import type { Executor } from '../executor/types.js';
import { renderHookCommand } from '../template/hook.js';
import {
  LorenzError,
  errorMessage,
  isLorenzError,
  type LorenzErrorCode,
} from '../workflow/errors.js';
import type { EventSink, HookExecutionMessage, HookName } from '../workflow/events.js';
import type { Issue } from '../workflow/issue.js';
import { assertWorkspaceCwd } from './containment.js';
import { OUTPUT_LIMIT, truncateCaptured, truncateOutput } from './output.js';
import { createOutputStream } from './output-stream.js';

/**
 * Numbers the hook runs of one log: each `started` record takes the next number, and the
 * `hook_output` records of that run carry it as their `seq`.
 */
export interface HookRunCounter {
  next: number;
}

/** after_create and before_run stop the run; after_run and before_remove only report. */
export const FAIL_FAST_HOOKS: ReadonlySet<HookName> = new Set(['after_create', 'before_run']);

export interface HookRequest {
  executor: Executor;
  emit: EventSink;
  /** Whether the sink of `emit` is behind (RunCommandOptions.outputDrained); absent: never. */
  outputDrained?: () => Promise<void> | undefined;
  hookName: HookName;
  /** The configured command; null means no hook (nothing runs, nothing is emitted). */
  command: string | null;
  /** The workspace: the hook's cwd, checked against `root` right before it runs. */
  workspace: string;
  root: string;
  issue: Issue | null;
  timeoutMs: number;
  killGraceMs?: number;
  slot: number;
  env?: NodeJS.ProcessEnv;
  /** First on the hook's PATH after its login profile (the git wrapper, once the agent ran). */
  pathFirst?: readonly string[];
  /** Cancellation: kills the hook like a timeout. */
  signal?: AbortSignal;
  /** Shared by every hook of the log (all slots); a fresh count when absent. */
  runs?: HookRunCounter;
  /** Trailing characters of streamed output to hold back (see createOutputStream). */
  holdOutput?: (text: string) => number;
}

/** What the hook did, as emitted; null when there was no hook. */
export type HookOutcome = HookExecutionMessage | null;

function failedBeforeRunning(
  request: HookRequest,
  command: string,
  error: string,
): HookExecutionMessage {
  const truncated = truncateOutput(error.trim());
  return {
    status: 'failed',
    hookName: request.hookName,
    command,
    cwd: request.workspace,
    exitCode: null,
    output: '',
    outputTruncated: false,
    error: truncated.text,
    errorTruncated: truncated.truncated,
    durationMs: 0,
    slot: request.slot,
  };
}

function failureText(
  result: Awaited<ReturnType<Executor['runCommand']>>,
  timeoutMs: number,
): { code: LorenzErrorCode; text: string; quotesOutput?: boolean } | null {
  if (result.cancelled) {
    return { code: 'hook_killed', text: 'hook killed: the run was cancelled or its Pod stopped' };
  }
  if (result.timedOut)
    return { code: 'hook_timed_out', text: `hook timed out after ${timeoutMs}ms` };
  if (result.spawnError !== undefined) {
    return {
      code: 'hook_failed',
      text: `hook failed to start: ${describeSpawnFailure(result.spawnError)}`,
    };
  }
  if (result.exitCode === 0) return null;
  if (result.exitCode === null && result.signal !== null) {
    return {
      code: 'hook_killed',
      text: `hook killed by ${result.signal}: ${result.output}`,
      quotesOutput: true,
    };
  }
  const status = result.exitCode ?? 'unknown';
  return {
    code: 'hook_failed',
    text: `hook failed with status ${status}: ${result.output}`,
    quotesOutput: true,
  };
}

/**
 * The record's `error`, trimmed as Lorenz reports it (docs/design.md#kept-to-the-letter). When the
 * quoted output was cut, its end is not the text's end: only the start is trimmed and the marker
 * counts the rest.
 */
function errorText(failure: { text: string; quotesOutput?: boolean }, outputDropped: number) {
  const dropped = failure.quotesOutput ? outputDropped : 0;
  return truncateCaptured(dropped > 0 ? failure.text.trimStart() : failure.text.trim(), dropped);
}

/**
 * Render, check and run one hook, emitting `hook_execution` messages: `started` then
 * `completed`/`failed`, or a single `failed` when it never ran (a template that does not
 * render, a cwd that fails containment). A fail-fast hook's failure is thrown as a
 * LorenzError (hook_failed, hook_timed_out, or the render/containment code); a best-effort
 * hook's failure is reported on stderr as `Ignoring <hook> hook failure: …` and swallowed.
 */
export async function runHook(request: HookRequest): Promise<HookOutcome> {
  if (request.command === null) return null;
  const { message, failure } = await attempt(request, request.command);
  if (failure === null) return message;
  if (FAIL_FAST_HOOKS.has(request.hookName)) throw failure;
  request.emit({
    type: 'stderr',
    message: `Ignoring ${request.hookName} hook failure: ${failure.message}`,
    slot: request.slot,
  });
  return message;
}

interface Attempt {
  message: HookExecutionMessage;
  failure: LorenzError | null;
}

function asLorenzError(error: unknown, request: HookRequest): LorenzError {
  if (isLorenzError(error)) return error;
  return new LorenzError('hook_failed', errorMessage(error), {
    hookName: request.hookName,
    slot: request.slot,
  });
}

/** Emit the single `failed` message of a hook that never ran. */
function notRun(request: HookRequest, command: string, failure: LorenzError): Attempt {
  const message = failedBeforeRunning(request, command, failure.message);
  request.emit({ type: 'hook_execution', message });
  return { message, failure };
}

async function attempt(request: HookRequest, template: string): Promise<Attempt> {
  const { executor, emit, hookName, workspace, slot } = request;
  let command: string;
  try {
    command = renderHookCommand(template, request.issue);
  } catch (error) {
    return notRun(request, template, asLorenzError(error, request));
  }
  const oversized = oversizedArgument(command);
  if (oversized !== null) {
    const failure = new LorenzError('hook_failed', `hook cannot start: ${oversized}`, {
      hookName,
      slot,
    });
    return notRun(request, command, failure);
  }
  try {
    await assertWorkspaceCwd(executor, request.root, workspace);
  } catch (error) {
    return notRun(request, command, asLorenzError(error, request));
  }
  const runs = request.runs ?? { next: 0 };
  const seq = runs.next;
  runs.next += 1;
  emit({
    type: 'hook_execution',
    message: { status: 'started', hookName, command, cwd: workspace, slot },
  });
  // The whole output goes to the log as it comes, between this run's started and its end.
  const stream = createOutputStream({
    onText: (text) => emit({ type: 'hook_output', message: { hookName, slot, seq, text } }),
    ...(request.holdOutput ? { holdBack: request.holdOutput } : {}),
  });
  let result: Awaited<ReturnType<Executor['runCommand']>>;
  try {
    result = await executor.runCommand(command, {
      cwd: workspace,
      root: request.root,
      timeoutMs: request.timeoutMs,
      killGraceMs: request.killGraceMs,
      env: request.env,
      ...(request.pathFirst ? { pathFirst: request.pathFirst } : {}),
      signal: request.signal,
      last: request.hookName === 'before_remove',
      // Streamed: the first OUTPUT_LIMIT characters are kept, the rest only counted.
      outputLimit: OUTPUT_LIMIT,
      onOutput: (chunk) => stream.push(chunk),
      ...(request.outputDrained ? { outputDrained: request.outputDrained } : {}),
    });
  } catch (error) {
    stream.end();
    // A remote executor's own refusal (the guard in the hook's shell) or a dropped
    // connection: the hook started, so this is its `failed` record.
    return notRun(request, command, asLorenzError(error, request));
  }
  stream.end();
  const output = truncateCaptured(result.output, result.outputDropped);
  const failure = failureText(result, request.timeoutMs);
  // A failure text that quotes the output quotes what was kept; the marker counts the rest.
  const error = failure === null ? null : errorText(failure, result.outputDropped);
  const message: HookExecutionMessage = {
    status: failure === null ? 'completed' : 'failed',
    hookName,
    command,
    cwd: workspace,
    exitCode: result.timedOut || result.cancelled ? null : result.exitCode,
    output: output.text,
    outputTruncated: output.truncated,
    error: error?.text ?? null,
    errorTruncated: error?.truncated ?? false,
    durationMs: result.durationMs,
    slot,
  };
  emit({ type: 'hook_execution', message });
  if (failure === null || error === null) return { message, failure: null };
  return {
    message,
    failure: new LorenzError(failure.code, error.text, {
      hookName,
      exitCode: message.exitCode,
      slot,
    }),
  };
}
