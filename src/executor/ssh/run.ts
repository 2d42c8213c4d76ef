import { holdWhileBehind } from '../local-run.js';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import { createOutputCapture, withListener, withoutFinalNewline } from '../output-capture.js';
import { DEFAULT_KILL_GRACE_MS } from '../local-group.js';
import type { CommandResult, RunCommandOptions } from '../types.js';
import { connectFailure, type SshConnection } from './connection.js';
import type { RemoteGroups } from './groups.js';
import { refusalIn } from './remote-call.js';
import { COMMAND_SCRIPT, GROUP_LINE, invocation, REFUSED_LINE, REFUSED_STATUS } from './scripts.js';

/** After the group is gone, how long a process that left it may keep the channel open. */
const STREAM_DRAIN_MS = 200;
/** A channel closed with no exit status: how long to wait for the connection to say why. */
const LOST_WAIT_MS = 1000;

export interface RemoteRun {
  connection: SshConnection;
  groups: RemoteGroups;
  /** Shell text that sets Lorenz's variables (see environment.ts). */
  exports: string;
  /** The run's LORENZ_RUN_MARKER value (run-marker.ts). */
  marker: string;
}

/** ssh2 reports a signal by name without its SIG prefix. */
export function signalName(name: string | undefined): NodeJS.Signals | null {
  if (!name) return null;
  return (name.startsWith('SIG') ? name : `SIG${name}`) as NodeJS.Signals;
}

/**
 * Splits the channel's stderr into the wrapper's protocol lines (its process group, a
 * refusal) and anything else, which is output like the rest.
 */
export function protocolReader(onGroup: (group: number) => void, onText: (text: string) => void) {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let protocol = true;
  const lines: string[] = [];
  return {
    push(chunk: Buffer) {
      if (!protocol) return onText(decoder.write(chunk));
      pending += decoder.write(chunk);
      let newline: number;
      while (protocol && (newline = pending.indexOf('\n')) !== -1) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.startsWith(GROUP_LINE)) onGroup(Number(line.slice(GROUP_LINE.length)));
        else if (line.startsWith(REFUSED_LINE)) lines.push(line);
        else {
          protocol = false;
          onText(`${line}\n`);
        }
      }
      if (!protocol && pending !== '') {
        onText(pending);
        pending = '';
      }
    },
    /** The protocol lines that were not the group's. */
    refusal: () => lines.join('\n'),
  };
}

/**
 * `runCommand` on the worker: the wrapper (scripts.ts) checks the cwd against `options.root`
 * in the command's own shell, reports its process group and runs `bash -lc <command>` with
 * stderr merged into stdout. A timeout or abort ends the remote group (SIGTERM, grace,
 * SIGKILL) from another channel. A connection that drops fails with ssh_connect; the group
 * it left running is ended when the connection is back, or at shutdown.
 */
// eslint-disable-next-line max-lines-per-function -- one remote command from spawn to exit; the handlers share its state
export async function runRemoteCommand(
  run: RemoteRun,
  command: string,
  options: RunCommandOptions & { root?: string },
): Promise<CommandResult> {
  const started = performance.now();
  const base = { output: '', outputDropped: 0, timedOut: false, cancelled: false };
  if (options.signal?.aborted) {
    return { ...base, exitCode: null, signal: null, cancelled: true, durationMs: 0 };
  }
  const script = invocation(COMMAND_SCRIPT, [
    'merge',
    options.cwd,
    options.root ?? '',
    `${run.exports}${command}`,
    run.marker,
  ]);
  const { channel, lost, exit: exited } = await run.connection.exec(script);
  channel.end();
  const capture = withListener(
    withoutFinalNewline(createOutputCapture(options.outputLimit)),
    options.onOutput,
  );
  const decoder = new StringDecoder('utf8');
  let group: number | undefined;
  let announceGroup: (group: number) => void = () => {};
  const groupKnown = new Promise<number>((resolve) => {
    announceGroup = resolve;
  });
  const stderr = protocolReader(
    (value) => {
      group = value;
      run.groups.add(value);
      options.onStart?.(value);
      announceGroup(value);
    },
    (text) => capture.push(text),
  );
  channel.on('data', (chunk: Buffer) => {
    capture.push(decoder.write(chunk));
    // Only stdout waits for a reader that is behind: stderr also carries the protocol.
    holdWhileBehind([channel], options.outputDrained?.());
  });
  channel.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  let exit: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined;
  void exited.then(({ code, signal }) => {
    exit = { code, signal: signalName(signal ?? undefined), at: performance.now() };
  });
  const closed = new Promise<void>((resolve) => channel.once('close', () => resolve()));

  let killing: Promise<void> | undefined;
  let killedFor: 'timeout' | 'abort' | undefined;
  let requestKill: () => void = () => {};
  const killRequested = new Promise<void>((resolve) => {
    requestKill = resolve;
  });
  const startKilling = (why: 'timeout' | 'abort') => {
    if (killing) return;
    killedFor = why;
    killing = groupKnown.then((known) =>
      run.groups.terminate(known, options.killGraceMs ?? DEFAULT_KILL_GRACE_MS),
    );
    requestKill();
  };
  const onTimeout = () => startKilling('timeout');
  const onAbort = () => startKilling('abort');
  const timer = setTimeout(onTimeout, options.timeoutMs);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let dropped: string | undefined;
  try {
    const outcome = await Promise.race([
      closed,
      killRequested,
      lost.then((reason) => ({ reason })),
    ]);
    if (typeof outcome === 'object') dropped = outcome.reason;
    else if (killing) {
      await Promise.race([killing.catch(() => undefined), lost]);
      await Promise.race([closed, sleep(STREAM_DRAIN_MS)]);
      channel.close();
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  capture.push(decoder.end());
  await Promise.race([exited, Promise.resolve()]);
  if (dropped === undefined && exit === undefined && !killing) {
    // The channel went first; the connection's own end (and its reason) follows shortly.
    dropped = await Promise.race([lost, sleep(LOST_WAIT_MS).then(() => undefined)]);
  }
  if (dropped !== undefined || (exit === undefined && !killing)) {
    if (group !== undefined) run.groups.orphan(group, options.killGraceMs);
    throw connectFailure(
      run.connection.name,
      `${dropped ?? 'the channel closed without an exit status'} while a command ran; ` +
        'its processes are ended once the worker is reachable again',
    );
  }
  if (exit?.code === REFUSED_STATUS) {
    const refusal = stderr.refusal();
    if (refusal !== '') {
      if (refusal.startsWith(`${REFUSED_LINE}spawn `)) {
        return {
          ...base,
          exitCode: null,
          signal: null,
          spawnError: refusal.slice(`${REFUSED_LINE}spawn `.length),
          durationMs: Math.round(performance.now() - started),
        };
      }
      const error = refusalIn(refusal);
      if (error) throw error;
    }
  }
  return {
    exitCode: killedFor ? null : (exit?.code ?? null),
    signal: killedFor ? 'SIGTERM' : (exit?.signal ?? null),
    output: capture.text,
    outputDropped: capture.dropped,
    timedOut: killedFor === 'timeout',
    cancelled: killedFor === 'abort',
    durationMs: Math.round((exit?.at ?? performance.now()) - started),
  };
}
