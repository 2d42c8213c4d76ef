// `npm run bench`: hook overhead and a whole `lorenz run --no-agent`, medians side by side.
// A benchmark, not a test: it prints figures and ratios against the targets in docs/benchmarks.md,
// and where a start's time goes (LORENZ_STARTUP_TRACE marks, src/workflow/startup-marks.ts).
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
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
// As `lorenz run` and the runner have it: each command's process started during the previous.
const executorAhead = createLocalExecutor({ commandsAhead: { env: process.env } });
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
  timed(() => executorAhead.runCommand('true', { cwd, timeoutMs: 60_000 })),
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
const [bare, viaExecutor, viaExecutorAhead, viaHook] = hooks.medians;
await executor.shutdown();
await executorAhead.shutdown();

// 2. Start-up: a whole `lorenz run --no-agent` with four trivial hooks vs four bare
// `bash -lc true`, through the launcher from the V8 startup snapshot and from the plain
// bundle; the PID namespace's share (the snapshot run on a PATH whose `unshare` fails, so
// hooks run without one); `--version`, `workflow validate`; and the runner as a run Pod
// starts it, from its command to the first hook's spawn.
const workflow = join(root, 'WORKFLOW.md');
writeFileSync(
  workflow,
  `---\nworkspace:\n  root: ${join(root, 'ws')}\nhooks:\n  after_create: 'true'\n  before_run: 'true'\n  after_run: 'true'\n  before_remove: 'true'\n---\n`,
);
const issue = join(root, 'issue.yaml');
writeFileSync(issue, 'identifier: ENG-1\ntitle: bench\nstate: Todo\n');
const node = join(repo, 'node_modules/.bin/node');
const launcher = join(repo, 'dist/cli/lorenz');
const noUnshare = join(root, 'no-unshare');
spawnSync('mkdir', ['-p', noUnshare]);
writeFileSync(join(noUnshare, 'unshare'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
const traceFile = join(root, 'trace.jsonl');
const blob = join(repo, 'dist/lorenz.snapshot.blob');

/** Runs argv; resolves its wall time; with `trace`, also the start-up marks it wrote. */
function timedRun(argv, env = {}, trace = false) {
  return new Promise((resolve, reject) => {
    if (trace) rmSync(traceFile, { force: true });
    const spawnedAt = performance.timeOrigin + performance.now();
    const start = performance.now();
    const child = spawn(argv[0], argv.slice(1), {
      stdio: 'ignore',
      env: {
        ...process.env,
        LORENZ_NODE: node,
        ...env,
        ...(trace ? { LORENZ_STARTUP_TRACE: traceFile } : {}),
      },
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`${argv.join(' ')} exited ${code}`));
      const wall = performance.now() - start;
      if (!trace) return resolve(wall);
      const [first, last] = readFileSync(traceFile, 'utf8').trim().split('\n');
      const t = JSON.parse(first);
      // From the command's start (the launcher's sh included) to the first hook's spawn.
      t.fromCommand = t.timeOrigin + t.marks.first_command_spawn - spawnedAt;
      // And the run's end (the trace's second line): the hooks from the first's spawn to the
      // last one's close, what the run does after it up to the `exit` event, then Node's
      // teardown until this process sees the command gone.
      if (last !== undefined) {
        const end = JSON.parse(last);
        t.end = {
          hooks: end.lastCommandDone - t.marks.first_command_spawn,
          afterLastHook: end.exit - end.lastCommandDone,
          teardown: spawnedAt + wall - (t.timeOrigin + end.exit),
          wall,
        };
      }
      resolve({ wall, trace: t });
    });
  });
}
const runArgs = ['run', '--workflow', workflow, '--issue', issue, '--no-agent'];
const baseline = process.env.BENCH_BASELINE;
const traces = { snapshot: [], plain: [] };
const traced = (kind, argv, env) => async () => {
  const { wall, trace } = await timedRun(argv, env, true);
  traces[kind].push(trace);
  return wall;
};
const whole = await interleaved([
  async () => {
    let total = 0;
    for (let i = 0; i < 4; i += 1) total += await bareBash();
    return total;
  },
  traced('snapshot', [launcher, ...runArgs]),
  traced('plain', [launcher, ...runArgs], { LORENZ_SNAPSHOT: '0' }),
  () => timedRun([launcher, ...runArgs], { PATH: `${noUnshare}:${process.env.PATH}` }),
  () => timedRun([node, '-e', '0']),
  // BENCH_BASELINE=<another checkout's dist/cli/lorenz.js, or its launcher dist/cli/lorenz>:
  // its run, in the same rounds. A launcher starts from that checkout's snapshot with that
  // checkout's node, the one its key names (another copy would cost a `node --version`).
  ...(baseline
    ? [
        baseline.endsWith('.js')
          ? () => timedRun([node, baseline, ...runArgs])
          : () =>
              timedRun([baseline, ...runArgs], {
                LORENZ_NODE: join(baseline, '../../../node_modules/.bin/node'),
              }),
      ]
    : []),
]);
const [fourBare, viaSnapshot, viaPlain, withoutNamespace, nodeAlone, viaBaseline] = whole.medians;

const small = await interleaved([
  () => timedRun([node, '-e', '0']),
  () => timedRun([launcher, '--version']),
  () => timedRun([launcher, '--version'], { LORENZ_SNAPSHOT: '0' }),
  () => timedRun([launcher, 'workflow', 'validate', workflow]),
  () => timedRun([launcher, 'workflow', 'validate', workflow], { LORENZ_SNAPSHOT: '0' }),
  // The snapshot restored and nothing run (`--version` after `--` is the CLI's, not node's),
  // and the same without rehashing its hash tables: the rehash's share, measured only (it
  // re-seeds string hashing; a blob's seed, shared by every start, would let crafted keys
  // collide).
  () => timedRun([node, '--snapshot-blob', blob, '--', '--version']),
  () => timedRun([node, '--no-rehash-snapshot', '--snapshot-blob', blob, '--', '--version']),
]);

// The runner: the inputs a controller renders, and the run Pod's command (RUNNER_NODE_FLAGS
// come from the launcher) from its start to the first hook's spawn.
const { renderRunInputs } = await import(join(repo, 'dist/tsc/controller/issuerun/inputs.js'));
const { loadWorkflowText } = await import(join(repo, 'dist/tsc/template/load-workflow.js'));
const { normalizeIssue } = await import(join(repo, 'dist/tsc/workflow/issue.js'));
const workflowText = readFileSync(workflow, 'utf8');
const loaded = loadWorkflowText(workflowText, 'bench');
const inputs = await renderRunInputs({
  workflowText,
  config: loaded.config,
  promptTemplate: loaded.promptTemplate,
  issue: normalizeIssue({ identifier: 'ENG-1', title: 'bench', state: 'Todo' }),
  run: { run: 'eng-1', identifier: 'ENG-1', attempt: null, ensembleSize: 1 },
});
const inputsDir = join(root, 'inputs');
spawnSync('mkdir', ['-p', inputsDir, join(root, 'pod-ws')]);
for (const [name, content] of Object.entries(inputs.files))
  writeFileSync(join(inputsDir, name), content);
const runnerArgs = [
  'runner',
  '--inputs',
  inputsDir,
  '--slot',
  '0',
  '--workspace',
  join(root, 'pod-ws'),
  '--issue-state-file',
  join(root, 'state'),
  '--termination-log',
  join(root, 'termination-log'),
  '--no-agent',
];
// The files as the init container copies them: in a copy the launcher asks node its version.
const podBin = join(root, 'lorenz-bin');
spawnSync('mkdir', ['-p', podBin]);
for (const file of ['lorenz', 'lorenz.js', 'lorenz.snapshot.blob', 'lorenz.snapshot.key'])
  copyFileSync(join(repo, 'dist', file), join(podBin, file));
const runnerTraces = { snapshot: [], plain: [] };
const runnerTraced = (kind, env) => async () => {
  const { trace } = await timedRun(['sh', join(podBin, 'lorenz'), ...runnerArgs], env, true);
  runnerTraces[kind].push(trace);
  return trace.fromCommand;
};
const runner = await interleaved([
  runnerTraced('snapshot'),
  runnerTraced('plain', { LORENZ_SNAPSHOT: '0' }),
]);
rmSync(root, { recursive: true, force: true });

// Each run's excess over the four bare shells of its own round, the median of those: robust
// to the machine's load drifting between rounds, unlike a difference of two medians.
const excessOf = (x) => whole.excess[whole.medians.indexOf(x)];
const ratio = (x) =>
  `${((fourBare + excessOf(x)) / fourBare).toFixed(3)}× (+${ms(excessOf(x))} per round)`;
const rows = [
  ['bare bash -lc true', ms(bare), ''],
  [
    'executor.runCommand(true)',
    ms(viaExecutor),
    `+${ms(hooks.excess[1])} per round (target ≤ 10 ms)`,
  ],
  [
    '  the same, started ahead',
    ms(viaExecutorAhead),
    `+${ms(hooks.excess[2])} per round (the process of \`lorenz run\`'s next hook)`,
  ],
  ['runHook(true) with events', ms(viaHook), `+${ms(hooks.excess[3])} per round (target ≤ 10 ms)`],
  ['node -e 0', ms(nodeAlone), ''],
  ['4 × bare bash -lc true', ms(fourBare), ''],
  [
    'lorenz run --no-agent, 4 hooks',
    ms(viaSnapshot),
    `${ratio(viaSnapshot)} from the snapshot (target ≤ 1.10×)`,
  ],
  ['  the same, plain bundle', ms(viaPlain), `${ratio(viaPlain)}`],
  [
    '  the same, no PID namespace',
    ms(withoutNamespace),
    `${ratio(withoutNamespace)}: the namespace's share ${ms(excessOf(viaSnapshot) - excessOf(withoutNamespace))}`,
  ],
  ...(viaBaseline === undefined
    ? []
    : [['  the same, BENCH_BASELINE', ms(viaBaseline), `${ratio(viaBaseline)}`]]),
  [
    'lorenz --version',
    ms(small.medians[1]),
    `snapshot; plain ${ms(small.medians[2])}; node -e 0 ${ms(small.medians[0])}`,
  ],
  ['lorenz workflow validate', ms(small.medians[3]), `snapshot; plain ${ms(small.medians[4])}`],
  [
    'snapshot restored, nothing run',
    ms(small.medians[5]),
    `+${ms(small.excess[5])} over node -e 0, of which the rehash ${ms(small.excess[5] - small.excess[6])}`,
  ],
  [
    'runner: command → first hook',
    ms(runner.medians[0]),
    `snapshot; plain ${ms(runner.medians[1])} (inputs verified, hooks re-rendered)`,
  ],
];
console.log(`medians of ${runs} interleaved rounds (BENCH_RUNS)`);
for (const [name, value, note] of rows)
  console.log(`${name.padEnd(34)} ${value.padStart(10)}   ${note}`);

/**
 * Median ms since the process started of each start-up mark, and the gaps between them; with
 * `withEnd`, where a `lorenz run`'s end goes too (the trace's second line).
 */
function breakdown(title, series, { withEnd = false } = {}) {
  const names = Object.keys(series[0].marks);
  console.log(`\n${title} (ms since the process started; median of ${series.length})`);
  let previous = 0;
  for (const name of names) {
    const at = median(series.map((t) => t.marks[name]));
    console.log(`  ${name.padEnd(22)} ${ms(at).padStart(10)}   +${ms(at - previous)}`);
    previous = at;
  }
  console.log(
    `  ${'from the command'.padEnd(22)} ${ms(median(series.map((t) => t.fromCommand))).padStart(10)}   (launcher and node start included)`,
  );
  // The runner's commands after its start are not only the four hooks: its start is the figure.
  if (!withEnd || series[0].end === undefined) return;
  const ends = series.map((t) => t.end);
  const rows = [
    ['the hooks', 'hooks', 'the first spawn to the last close; 4 bare shells: ' + ms(fourBare)],
    ['after the last hook', 'afterLastHook', 'removal, run_completed, the namespace ended'],
    ["Node's teardown", 'teardown', "the exit event until gone (node -e 0's is in its start)"],
    ['the whole run', 'wall', ''],
  ];
  for (const [label, key, note] of rows)
    console.log(
      `  ${label.padEnd(22)} ${ms(median(ends.map((e) => e[key]))).padStart(10)}   ${note}`,
    );
}
breakdown('lorenz run, snapshot: where the start goes', traces.snapshot, { withEnd: true });
breakdown('lorenz run, plain bundle', traces.plain, { withEnd: true });
breakdown('runner, snapshot', runnerTraces.snapshot);
breakdown('runner, plain bundle', runnerTraces.plain);
