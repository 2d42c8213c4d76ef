import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from '../usage.js';

/**
 * The flags every run command (get runs, logs, describe run) takes: where the runs are (the
 * namespace, the kubeconfig) and where the archive is when the kubeconfig does not say.
 */
export const RUN_SOURCE_OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  kubeconfig: { type: 'string' },
  'archive-dsn': { type: 'string' },
  'archive-url': { type: 'string' },
} as const;

/** A run command's arguments, strict; with `command`, exactly one positional: the run's name. */
export function parseRunArgs<O extends ParseArgsOptionsConfig>(
  args: string[],
  options: O,
  command?: string,
) {
  const parsed = parseArgs({
    args,
    strict: true,
    allowPositionals: command !== undefined,
    options,
  });
  if (command !== undefined && parsed.positionals.length !== 1) {
    throw new UsageError(`${command} takes one run name, got ${parsed.positionals.length}`);
  }
  return { values: parsed.values, name: parsed.positionals[0] ?? '' };
}
