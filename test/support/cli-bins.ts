import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * The two ways `lorenz` starts: the plain bundle, and the launcher restoring the engine from
 * the V8 startup snapshot (dist/cli/lorenz, hack/launcher.sh). The CLI tests run through
 * both: the snapshot must not change behaviour. `LORENZ_NODE` makes the launcher use the
 * node that built the snapshot (the one running vitest), whatever is first on PATH.
 */
export interface CliBin {
  name: string;
  argv: string[];
  env: Record<string, string>;
}

const repo = new URL('../..', import.meta.url).pathname;

export const CLI_BINS: readonly CliBin[] = [
  {
    name: 'the plain bundle',
    argv: [process.execPath, join(repo, 'dist/cli/lorenz.js')],
    env: {},
  },
  {
    name: 'the startup snapshot',
    argv: [join(repo, 'dist/cli/lorenz')],
    env: { LORENZ_NODE: process.execPath },
  },
];

/** Run `lorenz` through `bin`; `input` is written to its stdin (none: stdin is empty). */
export function runCli(bin: CliBin, args: string[], cwd: string, input?: string) {
  const [command = '', ...prefix] = bin.argv;
  const result = spawnSync(command, [...prefix, ...args], {
    cwd,
    encoding: 'utf8',
    ...(input === undefined ? {} : { input }),
    env: { ...process.env, ...bin.env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
