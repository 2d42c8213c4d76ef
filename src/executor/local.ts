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
import type { Executor } from './types.js';
import { DEFAULT_KILL_GRACE_MS, groupAlive, terminateGroup } from './local-group.js';
import { runLocalCommand, spawnLocalProcess } from './local-run.js';
import { startPidNamespace, type PidNamespace } from './pid-namespace.js';
import { markStartup } from '../workflow/startup-marks.js';

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
}

/**
 * The executor for this machine: `lorenz run` on a laptop and the runner inside a Pod.
 * Commands run under bash in their own process group (see local-run.ts); the filesystem
 * helpers are thin wrappers over node:fs so the lifecycle can stay executor-agnostic.
 */
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
  if (settings.startNamespaceNow) void pidNamespace();
  return {
    runCommand: async (command, options) =>
      runLocalCommand(
        command,
        {
          ...options,
          onStart: (group) => {
            groups.add(group);
            options.onStart?.(group);
          },
        },
        (await pidNamespace())?.enter(options.cwd),
      ),
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
