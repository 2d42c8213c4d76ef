// What the benchmark scripts share to report and to set up: their progress line, the median
// of a figure's samples, and the images hack/images.sh built (the real-node benchmarks).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

/** A progress line on stderr: stdout is left to the figures. */
export const say = (line: string): void => void process.stderr.write(`[bench] ${line}\n`);

/** The middle sample (the upper of the two middles for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** The operator and agent image tags hack/images.sh builds (or finds built). */
export function builtImages(): { operator: string; agent: string } {
  const result = spawnSync(join(root, 'hack', 'images.sh'), ['--print-env'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const get = (key: string) => result.stdout.match(new RegExp(`^${key}=(.+)$`, 'm'))?.[1];
  const operator = get('OPERATOR_IMAGE');
  const agent = get('AGENT_IMAGE');
  if (result.status !== 0 || !operator || !agent)
    throw new Error(`hack/images.sh --print-env failed (exit ${result.status})`);
  return { operator, agent };
}
