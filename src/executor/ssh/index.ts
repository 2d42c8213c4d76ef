import { DEFAULT_KILL_GRACE_MS } from '../local-group.js';
import type { Executor } from '../types.js';
import { createSshConnection, type SshTarget } from './connection.js';
import { copyTreeToWorker } from './copy-tree.js';
import { remoteExports } from './environment.js';
import { pathFirstStatement } from '../login-path.js';
import { createRemoteFiles } from './files.js';
import { createRemoteGroups, type RemoteGroups } from './groups.js';
import { endMarkedProcesses, newRunMarker } from './run-marker.js';
import { runRemoteCommand, type RemoteRun } from './run.js';
import { spawnRemoteProcess } from './spawn.js';

export { checkSshTimeout } from './copy-tree.js';
export type { SshTarget } from './connection.js';

export interface SshExecutorOptions {
  target: Omit<SshTarget, 'timeoutMs'>;
  /** worker.ssh_timeout_ms: connecting, each file operation, each transfer. */
  timeoutMs: number;
  /** The environment Lorenz started with; only what differs from it is shipped. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Channels open at once on the connection (below the host's MaxSessions). */
  maxChannels?: number;
}

export interface SshExecutor extends Executor {
  /** `user@host[:port]`. */
  readonly name: string;
  /** Connects now: fails with ssh_connect (unreachable, key refused, host key unknown). */
  connect(): Promise<void>;
  /**
   * The value of LORENZ_RUN_MARKER in the environment of every process this executor starts
   * on the host; shutdown ends every process of the user that still carries it.
   */
  readonly runMarker: string;
}

/**
 * The executor for a remote worker: everything the lifecycle does (hooks, git, the skills
 * overlay, the agent's bridge, the workspace's files) happens on the host over one SSH
 * connection. Nothing of this machine's environment goes along but what Lorenz sets (see
 * environment.ts), and the key and known_hosts stay in this process.
 */
export function createSshExecutor(options: SshExecutorOptions): SshExecutor {
  const base = options.baseEnv ?? process.env;
  // The groups signal over the connection, and the connection ends orphan groups whenever
  // it comes back: each refers to the other, through closures.
  const liveGroups: RemoteGroups = createRemoteGroups({
    get name() {
      return connection.name;
    },
    exec: (command) => connection.exec(command),
  });
  const connection = createSshConnection(
    { ...options.target, timeoutMs: options.timeoutMs },
    {
      // Groups a dropped connection left running end before anything else happens.
      onConnected: (exec) => liveGroups.endOrphans(exec),
      ...(options.maxChannels === undefined ? {} : { maxChannels: options.maxChannels }),
    },
  );
  const marker = newRunMarker();
  // Whether anything ran on the host: only then is there anything marked to end (and a
  // shutdown after a failed connect does not try the host again).
  let commandsStarted = false;
  const run = (options: { env?: NodeJS.ProcessEnv; pathFirst?: readonly string[] }): RemoteRun => {
    commandsStarted = true;
    return {
      connection,
      groups: liveGroups,
      // Lorenz's PATH directories last, so that they come first whatever else was exported.
      exports: `${remoteExports(options.env, base)}${options.pathFirst?.length ? `${pathFirstStatement(options.pathFirst)}\n` : ''}`,
      marker,
    };
  };
  const files = createRemoteFiles(connection, options.timeoutMs);
  return {
    ...files,
    name: connection.name,
    remote: true,
    runMarker: marker,
    connect: () => connection.connect(),
    runCommand: (command, commandOptions) =>
      runRemoteCommand(run(commandOptions), command, commandOptions),
    spawn: (command, spawnOptions) => spawnRemoteProcess(run(spawnOptions), command, spawnOptions),
    copyTree: (from, to, copyOptions) =>
      copyTreeToWorker(connection, from, to, {
        timeoutMs: options.timeoutMs,
        ...(copyOptions?.within === undefined ? {} : { within: copyOptions.within }),
      }),
    shutdown: async (graceMs = DEFAULT_KILL_GRACE_MS) => {
      try {
        await liveGroups.endAll(graceMs);
        // What left its group (daemons a hook started with setsid) goes with the run too.
        // Best effort, as for the groups: a host that cannot be reached keeps them.
        if (commandsStarted) {
          await endMarkedProcesses(connection, marker, graceMs).catch(() => undefined);
        }
      } finally {
        connection.close();
      }
    },
  };
}
