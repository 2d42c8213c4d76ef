// `npm run bench`: hook overhead and a whole `lorenz run --no-agent`, medians side by side.
// A benchmark, not a test: it prints figures and ratios against the targets in DESIGN.md.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const repo = new URL('..', import.meta.url).pathname;
const runs = Number(process.env.BENCH_RUNS ?? 15);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(1)} ms`;

function bareBash() {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn('bash', ['-lc', 'true'], { stdio: 'ignore', detached: true });
    child.on('error', reject);
    child.on('exit', () => resolve(performance.now() - start));
  });
}

/**
 * Interleaved sampling: each round runs every variant once, in turn, so that drift in the
 * machine's load (other processes, the login profile's caches) hits all variants alike.
 * Returns the median of each variant and the median of each variant's per-round excess over
 * the first (the baseline).
 */
async function interleaved(variants) {
  const times = variants.map(() => []);
  for (const fn of variants) await fn(); // warm-up
  for (let round = 0; round < runs; round += 1) {
    for (const [i, fn] of variants.entries()) times[i].push(await fn());
  }
  const excess = times.map((series) => median(series.map((t, round) => t - times[0][round])));
  return { medians: times.map(median), excess };
}

const { createLocalExecutor } = await import(join(repo, 'dist/tsc/executor/local.js'));
const { runHook } = await import(join(repo, 'dist/tsc/workspace/hooks.js'));
const executor = createLocalExecutor();
const root = mkdtempSync(join(tmpdir(), 'lorenz-bench-'));
const cwd = join(root, 'ENG-1');
spawnSync('mkdir', ['-p', cwd]);

// 1. One hook through the engine (render, containment check, events) vs bare `bash -lc true`.
const timed = (fn) => async () => {
  const start = performance.now();
  await fn();
  return performance.now() - start;
};
const hooks = await interleaved([
  bareBash,
  timed(() => executor.runCommand('true', { cwd, timeoutMs: 60_000 })),
  timed(() =>
    runHook({
      executor,
      root,
      workspace: cwd,
      hookName: 'before_run',
      command: 'true',
      issue: null,
      timeoutMs: 60_000,
      slot: 0,
      emit: () => {},
    }),
  ),
]);
const [bare, viaExecutor, viaHook] = hooks.medians;

// 2. A whole `lorenz run --no-agent` with four trivial hooks vs four bare `bash -lc true`.
const workflow = join(root, 'WORKFLOW.md');
writeFileSync(
  workflow,
  `---\nworkspace:\n  root: ${join(root, 'ws')}\nhooks:\n  after_create: 'true'\n  before_run: 'true'\n  after_run: 'true'\n  before_remove: 'true'\n---\n`,
);
const issue = join(root, 'issue.yaml');
writeFileSync(issue, 'identifier: ENG-1\ntitle: bench\nstate: Todo\n');
const node = join(repo, 'node_modules/.bin/node');
const cli = join(repo, 'dist/cli/lorenz.js');
const whole = await interleaved([
  async () => {
    let total = 0;
    for (let i = 0; i < 4; i += 1) total += await bareBash();
    return total;
  },
  () =>
    new Promise((resolve, reject) => {
      const start = performance.now();
      const child = spawn(
        node,
        [cli, 'run', '--workflow', workflow, '--issue', issue, '--no-agent'],
        {
          stdio: 'ignore',
        },
      );
      child.on('error', reject);
      child.on('exit', (code) =>
        code === 0
          ? resolve(performance.now() - start)
          : reject(new Error(`lorenz run exited ${code}`)),
      );
    }),
]);
const [fourBare, wholeRun] = whole.medians;
rmSync(root, { recursive: true, force: true });

const rows = [
  ['bare bash -lc true', ms(bare), ''],
  [
    'executor.runCommand(true)',
    ms(viaExecutor),
    `+${ms(hooks.excess[1])} per round (target ≤ 10 ms)`,
  ],
  ['runHook(true) with events', ms(viaHook), `+${ms(hooks.excess[2])} per round (target ≤ 10 ms)`],
  ['4 × bare bash -lc true', ms(fourBare), ''],
  [
    'lorenz run --no-agent, 4 hooks',
    ms(wholeRun),
    `${(wholeRun / fourBare).toFixed(3)}× (target ≤ 1.10×; reference Lorenz 1.24×)`,
  ],
];
console.log(`medians of ${runs} interleaved rounds (BENCH_RUNS)`);
for (const [name, value, note] of rows)
  console.log(`${name.padEnd(34)} ${value.padStart(10)}   ${note}`);
