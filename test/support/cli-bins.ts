import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';

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

/**
 * A temp folder for a CLI test file, removed after it: `file` writes a file there, `lorenz`
 * runs `bin` in it, and `eachBin` runs its tests once through each of CLI_BINS.
 */
export function cliSandbox(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const sandbox = {
    dir,
    bin: CLI_BINS[0] as CliBin,
    lorenz: (...args: string[]) => runCli(sandbox.bin, args, dir),
    file: (name: string, text: string): string => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    },
    /** A describe per bin, named `through <bin>`, whose tests run `lorenz` through it. */
    eachBin: (body: () => void) =>
      describe.each(CLI_BINS)('through $name', (each) => {
        beforeAll(() => {
          sandbox.bin = each;
        });
        body();
      }),
  };
  return sandbox;
}
