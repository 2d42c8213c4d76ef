// `npm run bench:reconcile`: the operator against its targets (docs/benchmarks.md).
// A benchmark, not a test: it prints figures and ratios side by side, never fails on them.
//
//   BENCH_COUNT        objects created at once per load phase            (500)
//   BENCH_RUNS         rounds of the two load phases, pooled             (1)
//   BENCH_CACHE_COUNT  IssueRuns in the cache for the RSS figure          (10000)
//   BENCH_CONCURRENCY  create calls in flight                            (50)
//   BENCH_KCM_QPS      Job controller client rates, comma-separated      (20,200)
//                      (20 is kube-controller-manager's default; burst = 1.5 × qps)
//   BENCH_LOG          the controller's log level                        (silent)
//   BENCH_NODE_FLAGS   Node/V8 flags of the Lorenz controller  (default: the flags of the Dockerfile's ENTRYPOINT)
//   BENCH_RUNTIME_V8_FLAGS  V8 flags the controller turns on once started ('' for none;
//                      default: CONTROLLER_RUNTIME_V8_FLAGS, src/controller/runtime/heap-flags.ts)
//   BENCH_PROFILE      N: profile the controller during each load and print the top N
//                      functions and files by self time (the CPU figure then includes the
//                      profiler's own cost: read it from a run without)      (off)
//   BENCH_PROFILE_DIR  with BENCH_PROFILE: also write each round's raw .cpuprofile and
//                      .heapprofile there (Chrome DevTools opens them)          (off)
//   BENCH_PHASES       which steps run, comma-separated: writes,load,cache (all three)
//                      (e.g. BENCH_PHASES=cache measures only the RSS with a full cache)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildRunnerBundle, esbuildBundle } from '../test/support/operator-build.js';
import { repo, startBenchCluster, type BenchCluster } from './reconcile-env.js';
import { percentile, type LoadFigures } from './reconcile-load.js';
import {
  cacheRss,
  jobLoad,
  lorenzLoad,
  measureWritesPerRun,
  type Bundles,
  type LoadRound,
} from './reconcile-phases.js';
import { summarizeAllocations, summarizeCpuProfile } from './cpu-profile.js';
import {
  cacheRssTarget,
  ratioTarget,
  roundVerdicts,
  TARGET_CPU_RATIO,
  TARGET_JOB_QPS,
  TARGET_LATENCY_RATIO,
} from './reconcile-targets.js';

const envNumber = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(value) || value < 1) throw new Error(`${name} must be a positive number`);
  return Math.floor(value);
};

const settings = {
  count: envNumber('BENCH_COUNT', 500),
  rounds: envNumber('BENCH_RUNS', 1),
  cacheCount: envNumber('BENCH_CACHE_COUNT', 10_000),
  concurrency: envNumber('BENCH_CONCURRENCY', 50),
  rates: (process.env.BENCH_KCM_QPS ?? '20,200')
    .split(',')
    .map((qps) => Number(qps.trim()))
    .filter((qps) => qps > 0)
    .map((qps) => ({ qps, burst: Math.ceil(qps * 1.5) })),
  phases: new Set(
    (process.env.BENCH_PHASES ?? 'writes,load,cache').split(',').map((phase) => phase.trim()),
  ),
};
// 10 000 objects on 2 cores take minutes: the wait grows with the count.
const profileTop = process.env.BENCH_PROFILE ? envNumber('BENCH_PROFILE', 25) : 0;
const load = {
  profile: profileTop > 0,
  count: settings.count,
  concurrency: settings.concurrency,
  timeoutMs: Math.max(300_000, settings.count * 90),
};

const since = performance.now();
const say = (line: string) =>
  process.stderr.write(`[bench ${((performance.now() - since) / 1000).toFixed(0)}s] ${line}\n`);
const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(0)} ms` : '—');
const mib = (value: number) => `${value.toFixed(0)} MiB`;
const cpu = (value: number) => `${value.toFixed(1)} s`;
const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : '—');

/** Pools the rounds: all latencies together, the median round's total. */
function pooled(rounds: LoadRound[]): LoadFigures & {
  rssMiB: number;
  idleRssMiB: number;
  cpuSeconds: number;
  writesPerObject: number;
} {
  const latencies = rounds.flatMap((r) => r.figures.latencies).sort((a, b) => a - b);
  const totals = rounds.map((r) => r.figures.totalMs).sort((a, b) => a - b);
  const count = rounds.reduce((sum, r) => sum + r.figures.count, 0);
  return {
    count,
    latencies,
    totalMs: totals[Math.floor(totals.length / 2)] ?? Number.NaN,
    missing: rounds.reduce((sum, r) => sum + r.figures.missing, 0),
    rssMiB: Math.max(...rounds.map((r) => r.rssMiB)),
    idleRssMiB: Math.max(...rounds.map((r) => r.idleRssMiB)),
    cpuSeconds: rounds.reduce((sum, r) => sum + r.cpuSeconds, 0) / rounds.length,
    writesPerObject: rounds.reduce((sum, r) => sum + r.writes.total, 0) / count,
  };
}

function printTable(rows: string[][]): void {
  const widths =
    rows[0]?.map((_, column) => Math.max(...rows.map((row) => row[column]?.length ?? 0))) ?? [];
  for (const [index, row] of rows.entries()) {
    console.log(
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    );
    if (index === 0) console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  }
}

async function buildBundles(cluster: BenchCluster): Promise<Bundles> {
  const [controller, runner, scriptedAgent] = await Promise.all([
    esbuildBundle(
      join(repo, 'bench/reconcile-controller.ts'),
      join(cluster.scratch, 'controller.mjs'),
    ),
    buildRunnerBundle(cluster.scratch, repo),
    esbuildBundle(
      join(repo, 'test/fixtures/scripted-agent/main.ts'),
      join(cluster.scratch, 'scripted-agent.mjs'),
    ),
  ]);
  return { controller, runner, scriptedAgent };
}

async function main(): Promise<void> {
  const started = performance.now();
  say(
    `starting a control plane (count ${settings.count}, rounds ${settings.rounds}, cache ${settings.cacheCount})`,
  );
  const cluster = await startBenchCluster();
  const stopOnSignal = () => void cluster.stop().finally(() => process.exit(130));
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  try {
    const bundles = await buildBundles(cluster);
    const writes = settings.phases.has('writes')
      ? (say('step 4: one run to Succeeded on the process node (API writes)'),
        await measureWritesPerRun(cluster, bundles))
      : undefined;
    const lorenzRounds: LoadRound[] = [];
    const jobRounds = new Map<number, LoadRound[]>(settings.rates.map((rate) => [rate.qps, []]));
    const loadRounds = settings.phases.has('load') ? settings.rounds : 0;
    for (let round = 1; round <= loadRounds; round++) {
      say(`round ${round}: ${settings.count} IssueRuns through the Lorenz controller`);
      const lorenzRound = await lorenzLoad(cluster, bundles, load, round);
      lorenzRounds.push(lorenzRound);
      // Said at once: a later phase that fails must not take these figures with it.
      const sortedMs = [...lorenzRound.figures.latencies].sort((a, b) => a - b);
      say(
        `round ${round}, Lorenz: p50 ${ms(percentile(sortedMs, 50))}, p99 ${ms(percentile(sortedMs, 99))}, ` +
          `all in ${ms(lorenzRound.figures.totalMs)}, missing ${lorenzRound.figures.missing}, ` +
          `RSS ${mib(lorenzRound.rssMiB)}, CPU ${cpu(lorenzRound.cpuSeconds)}, ` +
          `writes/run ${(lorenzRound.writes.total / lorenzRound.figures.count).toFixed(2)}`,
      );
      say(
        `round ${round}, Lorenz's writes: ` +
          [...lorenzRound.writes.breakdown]
            .sort()
            .map(([what, count]) => `${what} ×${count}`)
            .join(', '),
      );
      if (lorenzRound.profile && process.env.BENCH_PROFILE_DIR) {
        // The raw profiles, for a profiler's own viewer (Chrome DevTools opens both).
        const base = join(process.env.BENCH_PROFILE_DIR, `controller-round${round}`);
        await writeFile(`${base}.cpuprofile`, lorenzRound.profile.cpu);
        await writeFile(`${base}.heapprofile`, lorenzRound.profile.allocations);
        say(`round ${round}: profiles written to ${base}.cpuprofile and .heapprofile`);
      }
      if (lorenzRound.profile)
        for (const line of [
          ...summarizeCpuProfile(lorenzRound.profile.cpu, profileTop),
          ...summarizeAllocations(lorenzRound.profile.allocations, profileTop),
        ])
          process.stderr.write(`[bench] ${line}\n`);
      for (const rate of settings.rates) {
        say(`round ${round}: ${settings.count} Jobs through the Job controller (qps ${rate.qps})`);
        jobRounds.get(rate.qps)?.push(await jobLoad(cluster, load, round, rate));
      }
    }
    const cache = settings.phases.has('cache')
      ? (say(`step 5: ${settings.cacheCount} IssueRuns in the controller's cache`),
        await cacheRss(cluster, bundles, settings.cacheCount, settings.concurrency))
      : undefined;

    const lorenz = pooled(lorenzRounds);
    const baselines = settings.rates.map((rate) => ({
      rate,
      figures: pooled(jobRounds.get(rate.qps) ?? []),
    }));
    const header = ['figure', 'Lorenz'];
    for (const { rate } of baselines) header.push(`Job qps ${rate.qps}`, 'ratio');
    header.push('target');
    const row = (
      figure: string,
      mine: number,
      theirs: (b: (typeof baselines)[number]['figures']) => number,
      format: (value: number) => string,
      target: string,
    ) => [
      figure,
      format(mine),
      ...baselines.flatMap(({ figures }) => [
        format(theirs(figures)),
        ratio(mine, theirs(figures)),
      ]),
      target,
    ];
    const none = baselines.flatMap(() => ['—', '—']);
    // The targets are ratios against the Job controller at TARGET_JOB_QPS.
    const yardstick = baselines.find(({ rate }) => rate.qps === TARGET_JOB_QPS)?.figures;
    const n = settings.count;
    console.log('');
    console.log(
      `Reconcile benchmark: ${n} objects at once (${settings.concurrency} in flight), ` +
        `${settings.rounds} round(s), one apiserver, no scheduler (Pods stay Pending)`,
    );
    printTable([
      header,
      ...(lorenzRounds.length > 0
        ? [
            row(
              `create→Pod p50 (${n} at once)`,
              percentile(lorenz.latencies, 50),
              (b) => percentile(b.latencies, 50),
              ms,
              ratioTarget(
                percentile(lorenz.latencies, 50),
                yardstick && percentile(yardstick.latencies, 50),
                TARGET_LATENCY_RATIO,
              ),
            ),
            row(
              `create→Pod p99 (${n} at once)`,
              percentile(lorenz.latencies, 99),
              (b) => percentile(b.latencies, 99),
              ms,
              ratioTarget(
                percentile(lorenz.latencies, 99),
                yardstick && percentile(yardstick.latencies, 99),
                TARGET_LATENCY_RATIO,
              ),
            ),
            row(`until every Pod exists`, lorenz.totalMs, (b) => b.totalMs, ms, ''),
            row(
              'writes per object during the load',
              lorenz.writesPerObject,
              (b) => b.writesPerObject,
              (v) => v.toFixed(2),
              '',
            ),
            row('controller RSS before the load', lorenz.idleRssMiB, (b) => b.idleRssMiB, mib, ''),
            row('controller RSS after the load', lorenz.rssMiB, (b) => b.rssMiB, mib, ''),
            row(
              'controller CPU, load until idle',
              lorenz.cpuSeconds,
              (b) => b.cpuSeconds,
              cpu,
              ratioTarget(lorenz.cpuSeconds, yardstick?.cpuSeconds, TARGET_CPU_RATIO),
            ),
          ]
        : []),
      ...(writes
        ? [
            ['API writes per successful run (audit)', String(writes.audit.total), ...none, '≤ 16'],
            ['API writes per successful run (writes())', String(writes.counted), ...none, '≤ 16'],
          ]
        : []),
      ...(['live', 'restarted'] as const).flatMap((when) => {
        if (!cache) return [];
        const memory = cache[when];
        const label = `${cache.count} IssueRuns cached, ${when}`;
        return [
          [
            `RSS, ${label}, settled`,
            mib(memory.rssMiB),
            ...none,
            cacheRssTarget(cache.count, memory.rssMiB),
          ],
          [
            `RSS, ${label}, 20 s later at rest`,
            mib(memory.restedRssMiB),
            ...none,
            cacheRssTarget(cache.count, memory.restedRssMiB),
          ],
          [
            `  peak RSS / RSS after full GC / anonymous`,
            `${mib(memory.peakMiB)} / ${mib(memory.rssAfterGcMiB)} / ${mib(memory.anonMiB)}`,
            ...none,
            '',
          ],
          [
            `  after full GC: V8 heap used / reserved, external`,
            `${mib(memory.heapUsedMiB)} / ${mib(memory.heapTotalMiB)}, ${mib(memory.externalMiB)}`,
            ...none,
            '',
          ],
        ];
      }),
    ]);
    console.log('');
    const yardstickRounds = jobRounds.get(TARGET_JOB_QPS) ?? [];
    for (const line of roundVerdicts(lorenzRounds, yardstickRounds)) console.log(line);
    const missing = [lorenz, ...baselines.map((b) => b.figures)].reduce(
      (sum, f) => sum + f.missing,
      0,
    );
    if (missing > 0)
      console.log(`WARNING: ${missing} object(s) never got a Pod within the timeout`);
    if (writes) {
      console.log(`single run: ${writes.outcome}; writes by verb, resource, code (audit log):`);
      for (const [what, count] of [...writes.audit.breakdown].sort())
        console.log(`  ${count}  ${what}`);
    }
    if (cache)
      console.log(`parked runs' status writes: ${cache.statusWrites} for ${cache.count} runs`);
    console.log(`took ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await cluster.stop();
  }
}

await main();
