import {
  chmod,
  cp,
  lstat,
  mkdir,
  readFile,
  realpath,
  rm,
  rmdir,
  writeFile,
} from 'node:fs/promises';
import { homedir } from 'node:os';
import type { Executor, RunCommandOptions } from './types.js';
import { DEFAULT_KILL_GRACE_MS, groupAlive, terminateGroup } from './local-group.js';
import { runLocalCommand, spawnLocalProcess, superviseLocalCommand } from './local-run.js';
import { startStandby, type Standby } from './standby.js';
import { withPathFirst } from './login-path.js';
import { startPidNamespace, type PidNamespace } from './pid-namespace.js';
import { markFirstCommandSpawn, markStartup } from '../workflow/startup-marks.js';

export interface LocalExecutorOptions {
  /**
   * Run hooks in a PID namespace of the executor's own where the machine allows one, so that
   * `shutdown` ends even the processes that left their hook's group (default true).
   */
  pidNamespace?: boolean;
  /**
   * Start that namespace now rather than at the first hook: its holder then starts while the
   * caller loads the workflow (≈ 10 ms off the way to the first hook), at the price of a
   * holder that a run with no hook did not need (ended by `shutdown`, like any other).
   */
  startNamespaceNow?: boolean;
  /**
   * The environment the commands will have: given, the process of the next command is started
   * ahead, while the current one runs (the first once the namespace is up), and a command with
   * this environment takes it (standby.ts). For one-shot runs, whose hooks run one by one.
   */
  commandsAhead?: { env: NodeJS.ProcessEnv };
}

/**
 * The executor for this machine: `lorenz run` on a laptop and the runner inside a Pod.
 * Commands run under bash in their own process group (see local-run.ts); the filesystem
 * helpers are thin wrappers over node:fs so the lifecycle can stay executor-agnostic.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createLocalExecutor(settings: LocalExecutorOptions = {}): Executor {
  // Every group a command started: a hook may leave a daemon behind on purpose (a dev
  // server for the agent), which lives until the run ends and `shutdown` ends it.
  const groups = new Set<number>();
  // Started with the first hook, so a run without hooks never pays for it.
  let namespace: Promise<PidNamespace | null> | undefined;
  const pidNamespace = () =>
    (namespace ??=
      settings.pidNamespace === false
        ? Promise.resolve(null)
        : startPidNamespace().finally(() => markStartup('pid_namespace_ready')));
  // The process of the next command, started ahead (commandsAhead) once a command has
  // started: the first one's would be spawned while this process still loads the workflow,
  // and so delay that first command by as much as it saves it. None after shutdown.
  let ahead: Promise<Standby | null> | undefined;
  let closed = false;
  const startAhead = (options: RunCommandOptions): void => {
    const wanted = settings.commandsAhead;
    if (wanted === undefined || closed || options.last) return;
    const waiting = ahead;
    ahead = (async () => {
      const previous = await waiting;
      if (previous?.waiting()) return previous;
      const ns = await pidNamespace();
      return closed ? null : startStandby(ns?.enter(null) ?? [], wanted.env);
    })();
  };
  const takeAhead = async (command: string, options: RunCommandOptions) => {
    const standby = ahead === undefined ? null : await ahead;
    const taken = standby?.take(command, options.cwd, options.env ?? process.env) ?? null;
    if (taken !== null) markFirstCommandSpawn();
    return taken;
  };
  if (settings.startNamespaceNow) void pidNamespace();
  return {
    runCommand: async (command, options) => {
      const tracked: RunCommandOptions = {
        ...options,
        onStart: (group) => {
          groups.add(group);
          startAhead(options);
          options.onStart?.(group);
        },
      };
      // The text bash runs: Lorenz's PATH first after the login profile (login-path.ts).
      const text = withPathFirst(command, options.pathFirst);
      if (!options.signal?.aborted) {
        const taken = await takeAhead(text, options);
        if (taken !== null) {
          const result = await superviseLocalCommand(taken.child, tracked, performance.now());
          // Killed before it could read the command (by a previous hook): start it afresh.
          // One that timed out or was cancelled is reported as such, never run a second time.
          if (taken.acknowledged() || result.timedOut || result.cancelled) return result;
        }
      }
      return runLocalCommand(text, tracked, (await pidNamespace())?.enter(options.cwd));
    },
    spawn: spawnLocalProcess,
    ensureDirectory,
    realpath: (path) => realpath(path),
    pathKind,
    removeTree: (path) => rm(path, { recursive: true, force: true }),
    removeEmptyDirectory: (path) =>
      rmdir(path).then(
        () => true,
        () => false,
      ),
    copyTree,
    writeFile: async (path, content, options) => {
      await writeFile(path, content, { encoding: 'utf8', mode: options?.mode });
      // The mode only applies to a new file; an existing one keeps its own unless set here.
      if (options?.mode !== undefined) await chmod(path, options.mode);
    },
    readFile: async (path) => {
      if ((await pathKind(path)) !== 'file') return null;
      return readFile(path, 'utf8');
    },
    homeDirectory: async () => process.env.HOME || process.env.USERPROFILE || homedir(),
    shutdown: async (graceMs = DEFAULT_KILL_GRACE_MS) => {
      closed = true;
      await (await ahead)?.discard();
      const alive = [...groups];
      groups.clear();
      await Promise.all(
        alive.map(async (group) => {
          if (await groupAlive(group)) await terminateGroup(group, graceMs);
        }),
      );
      // Then whatever left its group: the namespace takes it down with it.
      const ending = namespace;
      namespace = undefined;
      await (await ending)?.end(graceMs);
    },
  };
}

/** mkdir -p; `mkdir` reports the first directory it created, undefined when none was new. */
async function ensureDirectory(path: string): Promise<boolean> {
  return (await mkdir(path, { recursive: true })) !== undefined;
}

async function pathKind(
  path: string,
): Promise<'missing' | 'directory' | 'file' | 'symlink' | 'other'> {
  try {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) return 'symlink';
    if (stats.isDirectory()) return 'directory';
    if (stats.isFile()) return 'file';
    return 'other';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    throw error;
  }
}

async function copyTree(from: string, to: string): Promise<void> {
  await rm(to, { recursive: true, force: true });
  await cp(from, to, { recursive: true, verbatimSymlinks: true });
}
