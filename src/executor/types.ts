/**
 * The small surface the lifecycle needs from wherever it runs: this machine (local), a
 * remote worker (ssh), or inside a run Pod (the runner uses local). The engine in
 * src/workspace is written once against this interface.
 */

export interface RunCommandOptions {
  cwd: string;
  /** Kill the whole process group after this long: SIGTERM, then SIGKILL after the grace. */
  timeoutMs: number;
  /** Grace between SIGTERM and SIGKILL; 5000 by default. */
  killGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  /**
   * Directories put first on PATH inside the login shell, after its profile (login-path.ts):
   * the git guard's wrapper, which a profile that resets PATH must not drop.
   */
  pathFirst?: readonly string[];
  /**
   * Asked after each piece of output given to onOutput: a promise says that whoever reads the
   * streamed output is behind (the runner's stdout is full), and the command's output is not
   * read until it settles, so the pipe holds the command back instead of memory filling up.
   */
  outputDrained?: () => Promise<void> | undefined;
  /** Keep at most this many characters of the output and count the rest (default: all). */
  outputLimit?: number;
  /**
   * Told every piece of output as it arrives (stdout and stderr merged in arrival order,
   * decoded as UTF-8 with U+FFFD for invalid bytes), all of it, whatever outputLimit keeps.
   * Called synchronously from the stream: it must not block, and what it throws is dropped.
   */
  onOutput?: (chunk: string) => void;
  /** Aborting behaves like a timeout that fires now (used for cancellation). */
  signal?: AbortSignal;
  /**
   * No command of this caller follows (a run's before_remove): an executor that starts the
   * next command's process ahead (local, `commandsAhead`) does not start one for it.
   */
  last?: boolean;
  /** Told the process group id once the command has started (for end-of-run cleanup). */
  onStart?: (processGroup: number) => void;
  /**
   * The workspace root a hook's cwd must stay inside. The caller has checked it already; a
   * remote executor checks again in the command's own shell, so that nothing can be swapped
   * in between over the network round trips (locally the check precedes the spawn).
   */
  root?: string;
}

export interface CommandResult {
  /** null when the process was killed by a signal or never ran. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /**
   * stdout and stderr merged in arrival order, without the final newline (as Lorenz does,
   * docs/design.md#kept-to-the-letter reports it): the first outputLimit characters.
   */
  output: string;
  /** Characters of output beyond outputLimit, counted but not kept. */
  outputDropped: number;
  /** Killed because timeoutMs passed. */
  timedOut: boolean;
  /** Killed because the caller's signal aborted (the run was cancelled, its Pod deleted). */
  cancelled: boolean;
  /** Set when the command could not be started at all. */
  spawnError?: string;
  durationMs: number;
}

export type SpawnOptions = Pick<RunCommandOptions, 'cwd' | 'env' | 'pathFirst'>;

export interface SpawnedProcess {
  readonly pid: number | undefined;
  readonly stdin: NodeJS.WritableStream;
  readonly stdout: NodeJS.ReadableStream;
  readonly stderr: NodeJS.ReadableStream;
  /** Resolves when the process has exited and every process in its group is gone. */
  readonly exited: Promise<{ exitCode: number | null; signal: NodeJS.Signals | null }>;
  /** Signal the whole process group: SIGTERM, then SIGKILL after graceMs. */
  kill(graceMs?: number): Promise<void>;
}

export interface Executor {
  /** Run `bash -lc <command>` in cwd, detached in its own process group. */
  runCommand(command: string, options: RunCommandOptions): Promise<CommandResult>;
  /** Start a long-lived `bash -lc <command>` with piped stdio, in its own process group. */
  spawn(command: string, options: SpawnOptions): SpawnedProcess;
  /** mkdir -p; resolves true when the final directory did not exist before. */
  ensureDirectory(path: string): Promise<boolean>;
  realpath(path: string): Promise<string>;
  /** lstat-like probe: 'missing' when nothing is there. */
  pathKind(path: string): Promise<'missing' | 'directory' | 'file' | 'symlink' | 'other'>;
  removeTree(path: string): Promise<void>;
  /** rmdir: removes the directory only when it is empty; false when it was not removed. */
  removeEmptyDirectory(path: string): Promise<boolean>;
  /**
   * Copy a directory tree of this machine (no symlinks inside: the caller checks) to `to`,
   * replacing it. `within`: the directory `to` must stay inside (the workspace); a remote
   * executor refuses a symlink from there down to `to` in the shell that extracts.
   */
  copyTree(from: string, to: string, options?: { within?: string }): Promise<void>;
  /** Write (replace) a file; `mode` for an executable script (0o755) or a private file. */
  writeFile(path: string, content: string, options?: { mode?: number }): Promise<void>;
  /** A regular file's text; null when nothing is there. Never follows a symlink at `path`. */
  readFile(path: string): Promise<string | null>;
  readonly homeDirectory: () => Promise<string>;
  /**
   * True when the workspace lives on another machine (an SSH worker): a `~` or `~/…` root
   * then expands against homeDirectory(), the worker's HOME, not this machine's.
   */
  readonly remote?: boolean;
  /**
   * End every process group this executor started that is still alive (a daemon a hook left
   * behind): SIGTERM, then SIGKILL after the grace. A one-shot command calls it before exiting
   * so that nothing it started outlives it.
   */
  shutdown(graceMs?: number): Promise<void>;
}
