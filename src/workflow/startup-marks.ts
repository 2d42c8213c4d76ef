import { appendFileSync } from 'node:fs';

/**
 * Where a start goes, from the process's start to the first command it spawns (a hook):
 * `performance.now()` counts from the process's start, also in a process restored from a
 * startup snapshot. With `LORENZ_STARTUP_TRACE=FILE` the marks are appended to FILE as one
 * JSON line when the first command spawns (`npm run bench` reads them), and where the run's
 * end goes as a second line at the process's `exit` (StartupTraceEnd); otherwise a mark is
 * one array push and nothing is ever written.
 */
export const STARTUP_TRACE_VARIABLE = 'LORENZ_STARTUP_TRACE';

export interface StartupTrace {
  /** Each mark and its ms since the process started, in order. */
  marks: Record<string, number>;
  /** Whether the process was restored from the V8 startup snapshot. */
  snapshot: boolean;
  /** `performance.timeOrigin`: the marks' zero, in ms since the epoch. */
  timeOrigin: number;
}

/** The trace's second line: after the last command, up to the process's `exit` event. */
export interface StartupTraceEnd {
  /** ms since the process started: the last command's output closed (null: none ran). */
  lastCommandDone: number | null;
  /** ms since the process started: the `exit` event; what follows is Node's own teardown. */
  exit: number;
}

const marks: [string, number][] = [];
let lastCommandDone: number | null = null;
let finished = false;
let fromSnapshot = false;

/** Called by the snapshot entry's main, before anything else. */
export function markRestoredFromSnapshot(): void {
  fromSnapshot = true;
}

export function markStartup(name: string): void {
  if (!finished) marks.push([name, performance.now()]);
}

/** A command's output closed: the last one is where the run's own work ends. */
export function markCommandDone(): void {
  lastCommandDone = performance.now();
}

function append(file: string, line: object): void {
  try {
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  } catch {
    // A trace is for benchmarks: it never fails the run.
  }
}

/** The first command spawns: the trace is complete, and written if asked for. */
export function markFirstCommandSpawn(env: NodeJS.ProcessEnv = process.env): void {
  if (finished) return;
  markStartup('first_command_spawn');
  finished = true;
  const file = env[STARTUP_TRACE_VARIABLE];
  if (!file) return;
  const trace: StartupTrace = {
    marks: Object.fromEntries(marks),
    snapshot: fromSnapshot,
    timeOrigin: performance.timeOrigin,
  };
  append(file, trace);
  process.once('exit', () => {
    const end: StartupTraceEnd = { lastCommandDone, exit: performance.now() };
    append(file, end);
  });
}
