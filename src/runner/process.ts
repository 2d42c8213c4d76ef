import type { Executor } from '../executor/types.js';

/**
 * What the run Pod's process gives either of the runner's entrypoints (a run, `lorenz runner`,
 * and a warm-up, `--prepare`): both write their events as JSON lines to stdout and stop on
 * SIGTERM, so they take their environment, output and signal the same way.
 */
export interface RunnerProcess {
  env: NodeJS.ProcessEnv;
  write: (line: string) => void;
  /** A promise while `write`'s destination is behind (a full stdout pipe); absent: never. */
  drained?: () => Promise<void> | undefined;
  /** Aborted on SIGTERM; what stops then is each entrypoint's to say. */
  signal?: AbortSignal;
  executor?: Executor;
}
