import { constants } from 'node:os';
import type { Logger } from 'pino';
import { errorMessage } from '../../workflow/errors.js';

export interface ShutdownOptions {
  logger: Logger;
  /** The orderly stop: whatever holds the event loop is closed once it settles. */
  stop: (signal: NodeJS.Signals) => Promise<void>;
  /** What the stop may wait for, said in the "shutting down" line. */
  waitsFor: string;
  /** From the first signal: the process exits then, whatever is still open. */
  deadlineMs: number;
  /** After the orderly stop: what is still open then is logged and the process exits. */
  lingerMs?: number;
  /** process.exit, or a test's stand-in. */
  exit?: (code: number) => void;
  /** Default SIGTERM (the kubelet) and SIGINT (Ctrl-C). */
  signals?: readonly NodeJS.Signals[];
}

export interface ShutdownHandle {
  /** Settles once the orderly stop a signal started has ended. */
  readonly stopped: Promise<NodeJS.Signals>;
  /** No more handling: for a stop made by a call (the caller owns the process then). */
  dispose(): void;
}

/** What still holds the event loop, as Node names it (`TCPSocketWrap`, `Timeout`, …). */
export function openResources(): string[] {
  return process.getActiveResourcesInfo();
}

/**
 * SIGTERM/SIGINT handling for a long-running process: the first signal starts the orderly
 * stop and says what it waits for; a second one exits at once (128 + its number, as a shell
 * reports it); past `deadlineMs` the process exits with 1, logging what was still open, so
 * it is always gone before the kubelet's SIGKILL. Both timers are unref'd: they fire only
 * while something else still holds the loop, i.e. only when a stop hangs or leaks. After a
 * clean stop the process ends because nothing is left, not because of an exit call.
 */
export function handleShutdownSignals(options: ShutdownOptions): ShutdownHandle {
  const { logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  let resolveStopped: (signal: NodeJS.Signals) => void = () => {};
  const stopped = new Promise<NodeJS.Signals>((resolve) => (resolveStopped = resolve));
  let stopping = false;

  const exitNow = (signal: NodeJS.Signals): void => {
    logger.warn({ signal, open: openResources() }, 'second signal: exiting at once');
    exit(128 + (constants.signals[signal] ?? 0));
  };

  function onSignal(signal: NodeJS.Signals): void {
    if (stopping) return exitNow(signal);
    stopping = true;
    logger.info({ signal, waitsFor: options.waitsFor }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error(
        { deadlineMs: options.deadlineMs, open: openResources() },
        'shutdown deadline reached: exiting with these still open',
      );
      exit(1);
    }, options.deadlineMs).unref();
    void options
      .stop(signal)
      .catch((error: unknown) => {
        logger.error({ err: error }, `shutdown failed: ${errorMessage(error)}`);
      })
      .then(() => {
        clearTimeout(deadline);
        // Stays for a second signal until the loop ends (a signal handler does not hold it).
        setTimeout(() => {
          logger.warn(
            { open: openResources() },
            'still open after the shutdown: exiting (a handle the stop did not close)',
          );
          exit(0);
        }, options.lingerMs ?? 2_000).unref();
        resolveStopped(signal);
      });
  }

  for (const signal of signals) process.on(signal, onSignal);
  return {
    stopped,
    dispose() {
      for (const signal of signals) process.off(signal, onSignal);
    },
  };
}
