// The operator built from source for the tiers that run it (integration, chaos, benchmarks):
// bundles as the image carries them, the image's files for the process node, and the CRDs.
// Benchmarks import this too; nothing here imports bench/.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { sshBundleOptions } from '../../hack/bundle-native.mjs';
import {
  OPERATOR_IMAGE_BUNDLE_PATH,
  OPERATOR_IMAGE_LAUNCHER_PATH,
  OPERATOR_IMAGE_SCRIPTED_AGENT_PATH,
} from '../../src/controller/shared/constants.js';

// npm packages stay in the bundle, some of them CommonJS that call require().
const REQUIRE_SHIM =
  "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);";

/**
 * The repository: the nearest folder at or above `from` with a package.json. It holds both
 * from source and from a bundle hack/run-ts.sh writes next to its entry point (bench/), where
 * a path fixed relative to import.meta would be wrong.
 */
export function repoRootAbove(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json at or above ${from}`);
  }
}

/** One ES module for the Node the images carry, npm packages included: every test bundle. */
export const NODE_ESM_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  logLevel: 'warning',
} as const;

/** `entry` bundled into one ES module at `outfile`, its source map beside it. */
export async function esbuildBundle(entry: string, outfile: string): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile,
    ...NODE_ESM_BUNDLE,
    banner: { js: REQUIRE_SHIM },
    // A map beside the bundle: BENCH_PROFILE names source files and lines, not bundle lines.
    sourcemap: 'linked',
    // The runner and the controller bundle ssh2 (SSH workers) without its native add-ons.
    ...sshBundleOptions,
  });
  return outfile;
}

/**
 * The runner bundle the operator image carries at /lorenz/lorenz.js, built from src (no
 * `npm run build`): ssh2 without its native add-ons, as in the image.
 */
export async function buildRunnerBundle(dir: string, repoRoot: string): Promise<string> {
  const entry = join(dir, 'runner-entry.ts');
  await writeFile(
    entry,
    `import { runRunnerCommand } from ${JSON.stringify(join(repoRoot, 'src/runner/main.ts'))};\n` +
      // argv: node lorenz.js runner …
      'process.exitCode = await runRunnerCommand(process.argv.slice(3));\n',
  );
  return esbuildBundle(entry, join(dir, 'lorenz.js'));
}

/**
 * The operator image's files as the Dockerfile puts them, for the process node's image map:
 * the runner bundle, the launcher (no startup snapshot: the runner starts from the bundle, its
 * fallback) and the scripted agent.
 */
export const operatorImageFiles = (runner: string, scriptedAgent: string, repoRoot: string) => ({
  [OPERATOR_IMAGE_BUNDLE_PATH]: runner,
  [OPERATOR_IMAGE_LAUNCHER_PATH]: join(repoRoot, 'hack/launcher.sh'),
  [OPERATOR_IMAGE_SCRIPTED_AGENT_PATH]: scriptedAgent,
});

/** The two CRDs as config/ generates them (the chart carries copies). */
export const lorenzCrdFiles = (repoRoot: string): string[] => [
  join(repoRoot, 'crds/lorenz.dev_workflows.yaml'),
  join(repoRoot, 'crds/lorenz.dev_issueruns.yaml'),
];
