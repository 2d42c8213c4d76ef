import { PassThrough } from 'node:stream';
import type { SpawnedProcess } from '../types.js';
import { DEFAULT_KILL_GRACE_MS } from '../local-group.js';
import { errorMessage } from '../../workflow/errors.js';
import type { RemoteRun } from './run.js';
import { protocolReader, signalName } from './run.js';
import { COMMAND_SCRIPT, invocation } from './scripts.js';

type Exit = { exitCode: number | null; signal: NodeJS.Signals | null };

/**
 * A long-lived `bash -lc <command>` on the worker (the agent's bridge) with the channel's
 * stdio as its own: the ACP bridge speaks over the SSH channel exactly as over a pipe. The
 * channel opens asynchronously, so the streams handed out are PassThroughs joined to it once
 * it is open; a failure to open is reported on stderr and as an exit, like a local spawn
 * that cannot start. `pid` is undefined: the remote process group is not a local pid.
 */
// eslint-disable-next-line max-lines-per-function -- one remote process; its handlers share its state
export function spawnRemoteProcess(
  run: RemoteRun,
  command: string,
  options: { cwd: string },
): SpawnedProcess {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let group: number | undefined;
  let announceGroup: (group: number) => void = () => {};
  const groupKnown = new Promise<number>((resolve) => {
    announceGroup = resolve;
  });
  let done = false;
  const exited = (async (): Promise<Exit> => {
    let opened;
    try {
      opened = await run.connection.exec(
        invocation(COMMAND_SCRIPT, [
          'split',
          options.cwd,
          '',
          `${run.exports}${command}`,
          run.marker,
        ]),
        { longLived: true },
      );
    } catch (error) {
      stderr.end(`cannot start bash in ${options.cwd}: ${errorMessage(error)}\n`);
      stdout.end();
      return { exitCode: null, signal: null };
    }
    const { channel, lost } = opened;
    let exit: Exit = { exitCode: null, signal: null };
    void opened.exit.then(({ code, signal }) => {
      exit = { exitCode: code, signal: signalName(signal ?? undefined) };
    });
    const reader = protocolReader(
      (value) => {
        group = value;
        run.groups.add(value);
        announceGroup(value);
      },
      (text) => stderr.write(text),
    );
    stdin.pipe(channel);
    channel.pipe(stdout);
    channel.stderr.on('data', (chunk: Buffer) => reader.push(chunk));
    const reason = await Promise.race([
      new Promise<null>((resolve) => channel.once('close', () => resolve(null))),
      lost,
    ]);
    if (reason !== null) {
      if (group !== undefined) run.groups.orphan(group, DEFAULT_KILL_GRACE_MS);
      stderr.write(`${reason}\n`);
      stdout.end();
    }
    const refusal = reader.refusal();
    if (refusal !== '') stderr.write(`${refusal}\n`);
    stderr.end();
    // Anything the bridge left in its group goes with it, as locally.
    if (group !== undefined && reason === null) {
      await run.groups.terminate(group, DEFAULT_KILL_GRACE_MS).catch(() => undefined);
    }
    return exit;
  })();
  void exited.then(() => {
    done = true;
  });
  return {
    pid: undefined,
    stdin,
    stdout,
    stderr,
    exited,
    async kill(graceMs = DEFAULT_KILL_GRACE_MS) {
      // A kill that comes before the group is known waits for it (or for the exit).
      const known = group ?? (await Promise.race([groupKnown, exited.then(() => undefined)]));
      if (known !== undefined && !done) {
        await run.groups.terminate(known, graceMs).catch(() => undefined);
      }
      await exited;
    },
  };
}
