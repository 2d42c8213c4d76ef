// Runs once before the containers tier: builds (or finds, by the digest of their inputs) the
// base, operator and agent images with hack/images.sh, which also starts the Docker engine
// when it can. No engine at all is the one case the tier skips, and it says why; a build
// that fails fails the tier. LORENZ_REQUIRE_CONTAINERS=1 (set by .ci/run) fails it there too.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Image tags from hack/images.sh, or why there is no engine to run them on. */
    containerImages:
      | { available: true; base: string; operator: string; agent: string; pause: string }
      | { available: false; reason: string };
  }
}

/** hack/images.sh's exit status when there is no Docker engine (not a failed build). */
const NO_ENGINE = 3;

export default function setup(project: TestProject): void {
  const root = join(import.meta.dirname, '..', '..');
  const started = Date.now();
  const result = spawnSync(join(root, 'hack', 'images.sh'), ['--print-env'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status === NO_ENGINE) {
    const reason = 'no Docker engine (hack/images.sh said why above)';
    if (process.env['LORENZ_REQUIRE_CONTAINERS'] === '1')
      throw new Error(
        `the containers tier is required (LORENZ_REQUIRE_CONTAINERS=1) but: ${reason}`,
      );
    process.stderr.write(`[containers] SKIPPED, every test of this tier: ${reason}\n`);
    project.provide('containerImages', { available: false, reason });
    return;
  }
  if (result.status !== 0)
    throw new Error(`hack/images.sh failed (exit ${result.status}); its log is above`);
  const env = new Map(
    result.stdout
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const image = (name: string) => {
    const value = env.get(name);
    if (!value) throw new Error(`hack/images.sh printed no ${name}= line:\n${result.stdout}`);
    return value;
  };
  project.provide('containerImages', {
    available: true,
    base: image('BASE_IMAGE'),
    operator: image('OPERATOR_IMAGE'),
    agent: image('AGENT_IMAGE'),
    pause: image('PAUSE_IMAGE'),
  });
  process.stderr.write(`[containers] images ready in ${seconds}s\n`);
}
