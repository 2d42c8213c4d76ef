// `npm run bench:budget-stop`: from a limit crossed to the agent's process stopped, against
// issue 31's goal (≤ 1 s). A benchmark, not a test: it prints figures and never fails on them.
//
// The real scripted ACP agent (a bridge process over stdio, as in a run Pod) reports a
// cumulative cost above the attempt's cost limit, then sleeps as if mid-turn. The runner's
// agent step cancels the turn (session/cancel), waits for the answer, and ends the bridge's
// process group. Measured: from the `budget_exceeded` record (the meter saw the crossing) to
// the `process_exit` record (the bridge has exited), as the step emits them.
//
//   BENCH_RUNS  attempts stopped  (20)
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createAcpAgentStep } from '../src/agent/step.js';
import { createLocalExecutor } from '../src/executor/local.js';
import { normalizeIssue } from '../src/workflow/issue.js';
import { buildScriptedAgent } from '../test/fixtures/scripted-agent/build.js';
import { say } from './report.js';

const GOAL_MS = 1000;
const runs = Math.max(1, Math.floor(Number(process.env.BENCH_RUNS ?? 20)) || 20);

// Bundled by hack/run-ts.sh: the fixture's path from the repository root (npm runs here).
const entry = join(process.cwd(), 'test/fixtures/scripted-agent/main.ts');
const agent = `${process.execPath} ${await buildScriptedAgent(entry)}`;
const executor = createLocalExecutor();
const stops: number[] = [];
for (let index = 0; index < runs; index += 1) {
  let crossedAt = NaN;
  let exitedAt = NaN;
  const step = createAcpAgentStep({
    config: {
      agent: { kind: 'scripted', maxTurns: 1 },
      agents: {
        turnTimeoutMs: 120_000,
        stallTimeoutMs: 0,
        responseTimeoutMs: 10_000,
        bridges: { scripted: { bridgeCommand: agent, env: {} } },
      },
      tracker: { apiKey: null },
    },
    renderPrompt: () => '@cost 1.50 USD\n@sleep 60000',
    isIssueActive: async () => true,
    executor,
    budget: {
      limits: { attempt: { cost: '1.00' }, warnRatio: 0.8, timeZone: 'UTC' },
      spentBefore: { run: { tokens: 0 }, issue: { tokens: 0 }, day: { tokens: 0 } },
      day: '2026-12-03',
    },
  });
  const result = await step({
    workspace: await mkdtemp(join(tmpdir(), 'bench-budget-')),
    slot: 0,
    ensembleSize: 1,
    issue: normalizeIssue({ identifier: 'BENCH-1', title: 'bench', state: 'Todo' }),
    attempt: null,
    signal: new AbortController().signal,
    emit: (event) => {
      if (event.type === 'budget_exceeded') crossedAt = performance.now();
      if (event.type === 'process_exit') exitedAt = performance.now();
    },
  });
  if (result.ok || result.code !== 'budget_exceeded') {
    say(`run ${index + 1}: not stopped by the budget (${result.ok ? 'ok' : result.code})`);
    continue;
  }
  stops.push(exitedAt - crossedAt);
}
await executor.shutdown();

stops.sort((a, b) => a - b);
const at = (p: number) =>
  stops[Math.min(stops.length - 1, Math.ceil((p / 100) * stops.length) - 1)] ?? NaN;
const p50 = at(50);
const p99 = at(99);
say(`limit crossed → agent process stopped, ${stops.length} attempts`);
say(
  `  p50 ${p50.toFixed(0)} ms   p99 ${p99.toFixed(0)} ms   max ${(stops.at(-1) ?? NaN).toFixed(0)} ms`,
);
say(`  goal ≤ ${GOAL_MS} ms: p99 / goal = ${(p99 / GOAL_MS).toFixed(2)}`);
