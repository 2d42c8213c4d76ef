import { createOutputCapture, withListener, withoutFinalNewline } from './output-capture.js';
import { markCommandDone, markFirstCommandSpawn } from '../workflow/startup-marks.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandResult, RunCommandOptions, SpawnOptions, SpawnedProcess } from './types.js';
import { withPathFirst } from './login-path.js';
import { DEFAULT_KILL_GRACE_MS, terminateGroup, waitGroupGone } from './local-group.js';

/**
 * `sh` only sets up the merged output and then replaces itself with `bash -lc <command>`
 * (same pid, so the group leader is bash). Both streams then share one pipe, which is the
 * only way to keep stdout and stderr in true arrival order; the command text reaches bash
 * as a positional argument, untouched.
 */
const MERGED_OUTPUT_SCRIPT = 'exec bash -lc "$1" 2>&1';
/** After the group is gone, how long a process that left the group may keep our pipe. */
const STREAM_DRAIN_MS = 200;

type Exit = { exitCode: number | null; signal: NodeJS.Signals | null };

function leaderExit(child: ChildProcess): Promise<Exit & { at: number }> {
  return new Promise((resolve) => {
    child.once('exit', (exitCode, signal) => resolve({ exitCode, signal, at: performance.now() }));
    child.once('error', () => resolve({ exitCode: null, signal: null, at: performance.now() }));
  });
}

function streamsClosed(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => resolve());
  });
}

/** A command that produced nothing: never started, or cancelled before it could. */
function ranNothing(started: number, how: Partial<CommandResult>): CommandResult {
  return {
    exitCode: null,
    signal: null,
    output: '',
    outputDropped: 0,
    timedOut: false,
    cancelled: false,
    durationMs: Math.round(performance.now() - started),
    ...how,
  };
}

const notStarted = (message: string, started: number): CommandResult =>
  ranNothing(started, { spawnError: message });

/**
 * Run one command to completion (`options.pathFirst` is the caller's to apply: local.ts
 * does, before a standby or a spawn runs the text). Returns when the command's output is closed; on timeout or
 * abort, only once its whole process group is dead (SIGTERM, grace, SIGKILL). `enter` is an
 * argv prefix the command runs under (nsenter into the run's PID namespace); it must pass the
 * exit status on and stay in the group, as nsenter does.
 */
export async function runLocalCommand(
  command: string,
  options: RunCommandOptions,
  enter: readonly string[] = [],
): Promise<CommandResult> {
  const started = performance.now();
  if (options.signal?.aborted) return ranNothing(started, { cancelled: true, durationMs: 0 });
  let child: ChildProcess;
  try {
    const argv = [...enter, '/bin/sh', '-c', MERGED_OUTPUT_SCRIPT, 'sh', command];
    markFirstCommandSpawn();
    child = spawn(argv[0] ?? '/bin/sh', argv.slice(1), {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    return notStarted((error as Error).message, started);
  }
  return superviseLocalCommand(child, options, started);
}

/**
 * Supervise a command's process, spawned just now or taken from a standby (standby.ts), to
 * completion: its output captured, its timeout and its cancellation enforced on its group.
 */
export async function superviseLocalCommand(
  child: ChildProcess,
  options: RunCommandOptions,
  started: number,
): Promise<CommandResult> {
  if (child.pid !== undefined) options.onStart?.(child.pid);
  let spawnError: string | undefined;
  child.once('error', (error) => {
    spawnError = `cannot start bash in ${options.cwd}: ${error.message}`;
  });
  const capture = withListener(
    withoutFinalNewline(createOutputCapture(options.outputLimit)),
    options.onOutput,
  );
  const streams = [child.stdout, child.stderr];
  for (const stream of streams) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      capture.push(chunk);
      holdWhileBehind(streams, options.outputDrained?.());
    });
  }
  const exit = leaderExit(child);
  const closed = streamsClosed(child);

  let killing: Promise<void> | undefined;
  let killedFor: 'timeout' | 'abort' | undefined;
  let startKilling: (why: 'timeout' | 'abort') => void = () => {};
  const killRequested = new Promise<void>((resolve) => {
    startKilling = (why) => {
      if (killing || child.pid === undefined) return;
      killedFor = why;
      killing = terminateGroup(child.pid, options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
      resolve();
    };
  });
  const onTimeout = () => startKilling('timeout');
  const onAbort = () => startKilling('abort');
  const timer = setTimeout(onTimeout, options.timeoutMs);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.race([closed, killRequested]);
    if (killing) {
      await killing;
      await exit;
      // A process that left the group (setsid) may still hold the pipe: do not wait for it.
      await Promise.race([closed, sleep(STREAM_DRAIN_MS)]);
      child.stdout?.destroy();
      child.stderr?.destroy();
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  const { exitCode, signal, at } = await exit;
  markCommandDone();
  if (spawnError !== undefined) return notStarted(spawnError, started);
  return {
    exitCode,
    signal,
    output: capture.text,
    outputDropped: capture.dropped,
    timedOut: killedFor === 'timeout',
    cancelled: killedFor === 'abort',
    durationMs: Math.round(at - started),
  };
}

/**
 * Start a long-lived `bash -lc <command>` (an agent bridge) with piped stdio in its own group.
 * When the leader exits, anything it left in the group is terminated too: launchers that
 * start a native child and die would otherwise leave it holding the pipes.
 */
export function spawnLocalProcess(command: string, options: SpawnOptions): SpawnedProcess {
  const child = spawn('bash', ['-lc', withPathFirst(command, options.pathFirst)], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  // stderr goes through a PassThrough so a failure to start is readable there too.
  const stderr = new PassThrough();
  child.stderr?.pipe(stderr);
  child.once('error', (error) => {
    stderr.end(`cannot start bash in ${options.cwd}: ${error.message}\n`);
  });
  const pid = child.pid;
  const exited: Promise<Exit> = leaderExit(child).then(async ({ exitCode, signal }) => {
    if (pid !== undefined && !(await waitGroupGone(pid, 0))) {
      await terminateGroup(pid, DEFAULT_KILL_GRACE_MS);
    }
    return { exitCode, signal };
  });
  let done = false;
  void exited.then(() => {
    done = true;
  });
  return {
    pid,
    stdin: child.stdin ?? new PassThrough(),
    stdout: child.stdout ?? new PassThrough(),
    stderr,
    exited,
    async kill(graceMs = DEFAULT_KILL_GRACE_MS) {
      // Once exited has settled the group is gone and its id may be reused: never signal it.
      if (pid !== undefined && !done) await terminateGroup(pid, graceMs);
      await exited;
    },
  };
}

/** Stops reading the command's output until the streamed output's reader has caught up. */
export function holdWhileBehind(
  streams: ReadonlyArray<NodeJS.ReadableStream | null | undefined>,
  behind: Promise<void> | undefined,
): void {
  if (!behind) return;
  for (const stream of streams) stream?.pause();
  void behind.then(() => {
    for (const stream of streams) stream?.resume();
  });
}
