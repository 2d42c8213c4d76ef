import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

export interface LoggerFactoryOptions {
  /** pino level; default LOG_LEVEL from the environment, else info. */
  level?: string;
  /** Where JSON lines go; default stdout. */
  destination?: DestinationStream;
  /** Fields on every line (e.g. the controller identity). */
  base?: Record<string, unknown>;
}

/**
 * The operator's JSON logger. Convention: per-run context goes in a child logger,
 * `logger.child({ run: 'ns/name', issue: 'ENG-1' })`, so every line about a run can be
 * found by either key; errors go under `err`.
 */
export function createLogger(options: LoggerFactoryOptions = {}): Logger {
  const config: LoggerOptions = {
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    base: { component: 'lorenz-controller', ...options.base },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}

/** A logger that drops everything (tests, libraries called without one). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
