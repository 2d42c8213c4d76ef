import { beforeAll, describe, expect, it } from 'vitest';
import type { IssueRun, Workflow } from '../../src/api/index.js';
import { SCRIPTED_AGENT_FILE } from '../../src/api/run-pod.js';
import {
  path,
  until,
  useOperatorEnv,
  type OperatorEnv,
  type WorkflowOptions,
} from './operator-harness.js';

// Budgets end to end (docs/budgets.md): the scripted agent reports usage, the controller gives
// each attempt its limits and what was spent before it, the runner stops the agent, and the
// Workflow's day stops dispatch until the next day — under a clock the test moves.
let clockOffsetMs = 0;
const now = () => new Date(Date.now() + clockOffsetMs);
const PRICES = 'lorenz-prices';

const env = useOperatorEnv({ priceTable: { name: PRICES }, now, progressIntervalMs: 200 });

/** A Workflow whose WORKFLOW.md has `agent.budget` (the YAML under it) and the given prompt. */
async function budgetWorkflow(
  env: OperatorEnv,
  name: string,
  budget: string,
  options: WorkflowOptions & { model?: string } = {},
): Promise<void> {
  let text = env.workflowText({
    hooks: { after_run: 'echo after-run' },
    maxRetryBackoffMs: 1000,
    ...options,
    agent: [`  budget:\n${budget}`, options.agent].filter(Boolean).join('\n'),
  });
  if (options.model) {
    text = text.replace(SCRIPTED_AGENT_FILE, `${SCRIPTED_AGENT_FILE} --model ${options.model}`);
  }
  await env.createWorkflow(name, text);
  await until(`Workflow ${name} to be ready`, async () => {
    const found = await env.admin.request<Workflow>({ path: path.workflows(name) });
    return found.status?.lastGoodConfigMap ? found : undefined;
  });
}

async function expectStopped(env: OperatorEnv, run: IssueRun, limit: string): Promise<void> {
  expect(run.status?.phase).toBe('Failed');
  expect(run.status?.reason).toBe('BudgetExceeded');
  expect(JSON.stringify(run.status?.slots)).toContain(limit);
  // after_run still ran, in the attempt that was stopped.
  const events = await env.hookEvents(run.metadata.name ?? '');
  expect(
    events.some((event) => event.reason === 'HookSucceeded' && event.note.startsWith('after_run')),
  ).toBe(true);
}

describe('budgets on the operator', () => {
  // The price table first: the controller reads it when it builds an attempt.
  beforeAll(async () => {
    await env.createConfigMap(PRICES, {
      'prices.yaml':
        'currency: USD\nmodels:\n  scripted-large: { input: 3, cachedInput: 0.3, output: 15 }\n',
    });
  });

  it('an attempt limit stops the agent after the turn that crossed it', async () => {
    await budgetWorkflow(env, 'b-attempt', '    attempt: { tokens: 1000 }', {
      maxTurns: 3,
      prompt: '@usage 800 400',
    });
    await env.createIssueRun('b-attempt-1', 'b-attempt', { identifier: 'BA-1', title: 'a' });
    const run = await env.finished('b-attempt-1');
    await expectStopped(env, run, 'attempt tokens 1200 of 1000');
    expect(run.status?.turn).toBe(1);
    expect(run.status?.usageDays).toEqual([{ day: expect.any(String), tokens: 1200 }]);
  });

  it('a run limit counts every attempt of the run', async () => {
    await budgetWorkflow(env, 'b-run', '    run: { tokens: 1000 }', {
      maxTurns: 2,
      // Attempt 1 spends 600 and dies in turn 2; attempt 2 crosses the run's limit in turn 1.
      prompt: '@usage 600 0\n@turn 2: @exit 1',
    });
    await env.createIssueRun(
      'b-run-1',
      'b-run',
      { identifier: 'BR-1', title: 'r' },
      { retries: 3 },
    );
    const run = await env.finished('b-run-1');
    await expectStopped(env, run, 'run tokens 1200 of 1000');
    expect(run.status?.attempt).toBe(2);
    expect(run.status?.usageDays?.[0]?.tokens).toBe(1200);
  });

  it("an issue limit counts the issue's earlier runs", async () => {
    await budgetWorkflow(env, 'b-issue', '    issue: { tokens: 1500 }', {
      prompt: '@usage 800 0',
    });
    await env.createIssueRun('b-issue-1', 'b-issue', { identifier: 'BI-1', title: 'i' });
    expect((await env.finished('b-issue-1')).status?.phase).toBe('Succeeded');
    await env.createIssueRun('b-issue-2', 'b-issue', { identifier: 'BI-1', title: 'i' });
    await expectStopped(env, await env.finished('b-issue-2'), 'issue tokens 1600 of 1500');
  });

  it('a cost the agent reports stops its turn at once, priced usage and metrics follow', async () => {
    await budgetWorkflow(env, 'b-cost', '    attempt: { cost: 1.00 }', {
      model: 'scripted-large',
      prompt: '@usage 100000 10000\n@cost 1.25 USD\n@sleep 60000\n@write late.txt never',
    });
    await env.createIssueRun('b-cost-1', 'b-cost', { identifier: 'BC-1', title: 'c' });
    const run = await env.finished('b-cost-1');
    await expectStopped(env, run, 'attempt cost 1.2500 of 1.00 USD');
    const took =
      Date.parse(run.status?.completionTime ?? '') - Date.parse(run.status?.startTime ?? '');
    expect(took).toBeLessThan(45_000);
    expect(run.status?.usage).toMatchObject({ model: 'scripted-large', currency: 'USD' });
    expect(Number(run.status?.usage?.cost)).toBeGreaterThanOrEqual(1.25);
    const metrics = await env.controller?.manager.metrics.registry.metrics();
    expect(metrics).toMatch(
      /lorenz_agent_cost_total\{namespace="default",workflow="b-cost",model="scripted-large",currency="USD"\} 1\.25/,
    );
    const workflow = await until('the day of b-cost in its status', async () => {
      const found = await env.admin.request<Workflow>({ path: path.workflows('b-cost') });
      return found.status?.budget?.cost ? found : undefined;
    });
    expect(workflow.status?.budget).toMatchObject({ currency: 'USD', timeZone: 'UTC' });
    // kubectl get lwf -o wide shows the day's spend.
    const [header = '', row = ''] = (
      await env.kubectl('-n', 'default', 'get', 'lwf', 'b-cost', '-o', 'wide')
    ).split('\n');
    const column = header.indexOf('COST-TODAY');
    expect(column).toBeGreaterThan(0);
    expect(row.slice(column).split(/\s+/)[0]).toBe(workflow.status?.budget?.cost);
  });

  it('a spent day stops dispatch until the next day, then it starts again', async () => {
    const board = [1, 2, 3]
      .map((n) => `    - { id: "d${n}", identifier: "DAY-${n}", title: "d", state: "Todo" }`)
      .join('\n');
    await budgetWorkflow(env, 'b-day', '    day: { tokens: 1300 }\n    time_zone: Europe/Paris', {
      tracker: `  issues:\n${board}`,
      agent: '  max_concurrent_agents: 1',
      pollingMs: 1000,
      prompt: '@usage 700 0',
    });
    const read = () => env.admin.request<Workflow>({ path: path.workflows('b-day') });
    // DAY-1 runs, continues (its issue stays active) and its second attempt crosses the day.
    const spent = await until(
      "b-day's day to be spent",
      async () => {
        const found = await read();
        return found.status?.budget?.exhausted && found.status.dispatch?.budgetSpent
          ? found
          : undefined;
      },
      120_000,
    );
    expect(spent.status?.budget).toMatchObject({ timeZone: 'Europe/Paris', tokens: 1400 });
    const runs = async () =>
      (await env.admin.request<{ items: IssueRun[] }>({ path: path.issueRuns() })).items.filter(
        (run) => run.spec.workflowRef.name === 'b-day',
      );
    const stopped = await env.finished('b-day-day-1');
    expect(stopped.status?.reason).toBe('BudgetExceeded');
    // Polls go on; nothing new is dispatched while the day is spent.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await runs()).map((run) => run.spec.issue.identifier)).toEqual(['DAY-1']);

    // The next day (in Europe/Paris): dispatch resumes.
    const nextDay = Date.parse(spent.status?.budget?.nextDayTime ?? '');
    expect(nextDay).toBeGreaterThan(now().getTime());
    clockOffsetMs = nextDay - Date.now() + 60_000;
    await env.kubectl('annotate', 'workflow', 'b-day', `poke=${Date.now()}`, '--overwrite');
    const resumed = await until(
      'DAY-2 dispatched on the next day',
      async () => {
        const all = await runs();
        return all.some((run) => run.spec.issue.identifier === 'DAY-2') ? all : undefined;
      },
      60_000,
    );
    expect(resumed.length).toBe(2);
    await until('a new day in the status', async () => {
      const after = await read();
      return after.status?.budget?.day !== spent.status?.budget?.day ? after : undefined;
    });
    // DAY-1's run stays as the budget left it: it is not dispatched again.
    expect((await env.getRun('b-day-day-1')).status?.reason).toBe('BudgetExceeded');
  });
});
