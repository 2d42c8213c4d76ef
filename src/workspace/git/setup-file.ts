import { parse as parseYaml } from 'yaml';
import { errorMessage } from '../../workflow/errors.js';

/**
 * What a repository declares about its own setup: `.lorenz/workspace.yml` (or .yaml, .json)
 * with `setup` and `teardown`, each a list of `[binary, argument, …]` steps. No shell: each
 * step is one binary and its arguments, run as they are. With no file, setup is inferred
 * from the lock files the repository has.
 */
export const SETUP_FILES = [
  '.lorenz/workspace.yml',
  '.lorenz/workspace.yaml',
  '.lorenz/workspace.json',
] as const;

export type SetupStep = readonly [string, ...string[]];

export interface RepositorySetup {
  /** Where the steps came from: the file, or `inferred from <lock files>`. */
  source: string;
  setup: SetupStep[];
  teardown: SetupStep[];
}

/** Thrown for a setup file that does not hold the two lists; the caller names the code. */
export class SetupFileError extends Error {}

function parseSteps(value: unknown, file: string, key: string): SetupStep[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new SetupFileError(`${file}: ${key} must be a list of steps`);
  return value.map((step: unknown, index) => {
    const where = `${file}: ${key}[${index}]`;
    if (!Array.isArray(step) || step.length === 0) {
      throw new SetupFileError(`${where} must be a list [binary, argument, …]`);
    }
    const words = step.map((word: unknown) => {
      if (typeof word !== 'string' && typeof word !== 'number') {
        throw new SetupFileError(`${where} must hold only strings`);
      }
      return String(word);
    });
    return words as unknown as SetupStep;
  });
}

/** Parses a setup file's text; `setup` left out means "infer it" (null), `setup: []` none. */
export function parseSetupFile(
  text: string,
  file: string,
): { setup: SetupStep[] | null; teardown: SetupStep[] } {
  let raw: unknown;
  try {
    raw = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new SetupFileError(`${file} does not parse: ${errorMessage(error)}`);
  }
  if (raw === null || raw === undefined) return { setup: null, teardown: [] };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new SetupFileError(`${file} must be a map with setup and teardown`);
  }
  const map = raw as Record<string, unknown>;
  for (const key of Object.keys(map)) {
    if (key !== 'setup' && key !== 'teardown') {
      throw new SetupFileError(`${file}: unknown key ${key} (only setup and teardown)`);
    }
  }
  return {
    setup: Object.hasOwn(map, 'setup') ? parseSteps(map.setup, file, 'setup') : null,
    teardown: parseSteps(map.teardown, file, 'teardown'),
  };
}

/**
 * Setup from lock files, both lines when both apply: mise installs the tools mise.toml
 * declares, then the package manager installs exactly what its lock file pins.
 */
export function inferSetup(present: ReadonlySet<string>): { steps: SetupStep[]; from: string[] } {
  const steps: SetupStep[] = [];
  const from: string[] = [];
  const mise = ['mise.toml', '.mise.toml'].find((file) => present.has(file));
  if (mise) {
    steps.push(['mise', 'install']);
    from.push(mise);
  }
  if (present.has('pnpm-lock.yaml')) {
    steps.push(['pnpm', 'install', '--frozen-lockfile']);
    from.push('pnpm-lock.yaml');
  } else if (present.has('package-lock.json')) {
    steps.push(['npm', 'ci']);
    from.push('package-lock.json');
  }
  return { steps, from };
}

/** The files inferSetup looks at. */
export const INFERENCE_FILES = ['mise.toml', '.mise.toml', 'pnpm-lock.yaml', 'package-lock.json'];
