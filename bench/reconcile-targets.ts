// The reconcile benchmark's targets (docs/benchmarks.md): each figure is printed beside its
// target and whether this run met it. A benchmark never fails on them; it says.
import { percentile } from './reconcile-load.js';
import type { LoadRound } from './reconcile-phases.js';

/** Against kube-controller-manager's Job controller at this client rate, in the same run. */
export const TARGET_JOB_QPS = 200;
/** create→Pod p50 and p99, Lorenz over the Job controller. */
export const TARGET_LATENCY_RATIO = 1.0;
/** Controller CPU during the load, Lorenz over the Job controller. */
export const TARGET_CPU_RATIO = 1.5;
/** Controller RSS with this many IssueRuns cached (live and after a restart), in MiB. */
export const TARGET_CACHE_RSS_MIB: ReadonlyMap<number, number> = new Map([
  [10_000, 150],
  [100_000, 1024],
]);

const verdict = (met: boolean) => (met ? 'met' : 'NOT met');

/** "≤ 1.0× Job qps 200: met" for a ratio against the Job controller. */
export function ratioTarget(mine: number, theirs: number | undefined, limit: number): string {
  const target = `≤ ${limit.toFixed(1)}× Job qps ${TARGET_JOB_QPS}`;
  if (theirs === undefined || !(theirs > 0) || !Number.isFinite(mine)) return target;
  return `${target}: ${verdict(mine / theirs <= limit)}`;
}

/** The RSS target at this cache size, or a note that there is none at it. */
export function cacheRssTarget(count: number, rssMiB: number): string {
  const limit = TARGET_CACHE_RSS_MIB.get(count);
  if (limit === undefined) return `(targets at ${[...TARGET_CACHE_RSS_MIB.keys()].join(', ')})`;
  return `≤ ${limit} MiB: ${verdict(rssMiB <= limit)}`;
}

/**
 * Round by round, each ratio beside its target: the target asks for three rounds in a row,
 * which pooled figures would hide.
 */
export function roundVerdicts(lorenz: readonly LoadRound[], jobs: readonly LoadRound[]): string[] {
  const lines: string[] = [];
  lorenz.forEach((mine, index) => {
    const theirs = jobs[index];
    if (!theirs) return;
    const sorted = (round: LoadRound) => [...round.figures.latencies].sort((a, b) => a - b);
    const p = (round: LoadRound, at: number) => percentile(sorted(round), at);
    const ratios = {
      p50: p(mine, 50) / p(theirs, 50),
      p99: p(mine, 99) / p(theirs, 99),
      cpu: mine.cpuSeconds / theirs.cpuSeconds,
    };
    const met =
      ratios.p50 <= TARGET_LATENCY_RATIO &&
      ratios.p99 <= TARGET_LATENCY_RATIO &&
      ratios.cpu <= TARGET_CPU_RATIO;
    lines.push(
      `round ${index + 1}: p50 ${p(mine, 50).toFixed(0)} / ${p(theirs, 50).toFixed(0)} ms (${ratios.p50.toFixed(2)}×), ` +
        `p99 ${p(mine, 99).toFixed(0)} / ${p(theirs, 99).toFixed(0)} ms (${ratios.p99.toFixed(2)}×), ` +
        `CPU ${mine.cpuSeconds.toFixed(2)} / ${theirs.cpuSeconds.toFixed(2)} s (${ratios.cpu.toFixed(2)}×): ` +
        `targets ${verdict(met)}`,
    );
  });
  return lines;
}
