import type { Logger } from 'pino';
import { errorMessage } from '../../workflow/errors.js';

export interface ShutdownOptions {
  logger: Logger;
  /** The orderly stop (for a signal, or a call): whatever holds the loop is closed after. */
  stop: (how: NodeJS.Signals | 'stopped') => Promise<void>;
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
  /** Settles once the orderly stop has ended (the first signal's, or stop()'s). */
  readonly stopped: Promise<NodeJS.Signals | 'stopped'>;
  /** The orderly stop without a signal (the deadline and the linger still apply). */
  stop(): Promise<NodeJS.Signals | 'stopped'>;
}

const SIGNAL_NUMBER: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGTERM: 15 };

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
  let resolveStopped: (how: NodeJS.Signals | 'stopped') => void = () => {};
  const stopped = new Promise<NodeJS.Signals | 'stopped'>((resolve) => (resolveStopped = resolve));
  let stopping = false;

  function begin(how: NodeJS.Signals | 'stopped'): Promise<NodeJS.Signals | 'stopped'> {
    if (stopping) return stopped;
    stopping = true;
    logger.info(
      { ...(how === 'stopped' ? {} : { signal: how }), waitsFor: options.waitsFor },
      'shutting down',
    );
    const deadline = setTimeout(() => {
      logger.error(
        { deadlineMs: options.deadlineMs, open: openResources() },
        'shutdown deadline reached: exiting with these still open',
      );
      exit(1);
    }, options.deadlineMs).unref();
    void options
      .stop(how)
      .catch((error: unknown) => {
        logger.error({ err: error }, `shutdown failed: ${errorMessage(error)}`);
      })
      .then(() => {
        clearTimeout(deadline);
        for (const signal of signals) process.off(signal, onSignal);
        // Re-armed for a second signal between here and the loop's end: still at once.
        for (const signal of signals) process.once(signal, onSecondSignal);
        const lingerMs = options.lingerMs ?? 2_000;
        setTimeout(() => {
          logger.warn(
            { open: openResources() },
            'still open after the shutdown: exiting (a handle the stop did not close)',
          );
          exit(0);
        }, lingerMs).unref();
        resolveStopped(how);
      });
    return stopped;
  }

  function onSecondSignal(signal: NodeJS.Signals): void {
    logger.warn({ signal, open: openResources() }, 'second signal: exiting at once');
    exit(128 + (SIGNAL_NUMBER[signal] ?? 0));
  }

  function onSignal(signal: NodeJS.Signals): void {
    if (stopping) return onSecondSignal(signal);
    void begin(signal);
  }

  for (const signal of signals) process.on(signal, onSignal);
  return { stopped, stop: () => begin('stopped') };
}
