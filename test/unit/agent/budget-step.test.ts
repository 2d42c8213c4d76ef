import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BudgetLimits, RunBudget } from '../../../src/workflow/budget.js';
import {
  agentConfig,
  stepContext,
  quickAgentStep,
  scriptedAgentCommandPerSuite,
} from '../../fixtures/scripted-agent/harness.js';

// The runner's side of budgets against the real scripted ACP agent: limits stop the agent,
// warnings reach its next prompt, usage is priced, an agent that reports nothing is said to.
const agentCommand = scriptedAgentCommandPerSuite();

const zero = { tokens: 0 };
function budget(limits: Partial<BudgetLimits>, more: Partial<RunBudget> = {}): RunBudget {
  return {
    limits: { warnRatio: 0.8, timeZone: 'UTC', ...limits },
    spentBefore: { run: zero, issue: zero, day: zero },
    day: '2026-12-03',
    ...more,
  };
}

async function run(options: {
  prompt: string;
  budget: RunBudget;
  maxTurns?: number;
  flags?: string;
}) {
  const harness = await stepContext();
  const promptLog = join(harness.context.workspace, 'prompts.jsonl');
  const step = quickAgentStep({
    config: agentConfig(`${agentCommand()} --prompt-log ${promptLog} ${options.flags ?? ''}`, {
      maxTurns: options.maxTurns ?? 1,
    }),
    renderPrompt: () => options.prompt,
    budget: options.budget,
  });
  const started = performance.now();
  const result = await step(harness.context);
  const prompts = async (): Promise<string[]> =>
    (await readFile(promptLog, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { text: string }).text);
  return { result, harness, elapsedMs: performance.now() - started, prompts };
}

describe('the agent step under a budget', () => {
  it.each([
    ['attempt', { attempt: { tokens: 1000 } }, {}, 'attempt tokens 1200 of 1000'],
    ['run', { run: { tokens: 1000 } }, { run: { tokens: 500 } }, 'run tokens 1700 of 1000'],
    ['issue', { issue: { tokens: 1500 } }, { issue: { tokens: 400 } }, 'issue tokens 1600 of 1500'],
    ['day', { day: { tokens: 1300 } }, { day: { tokens: 100 } }, 'day tokens 1300 of 1300'],
  ] as const)(
    'a %s token limit crossed by a turn stops the agent before its next turn',
    async (_scope, limits, before, message) => {
      const { result, harness } = await run({
        prompt: '@usage 800 400',
        maxTurns: 3,
        budget: budget(limits, {
          spentBefore: { run: zero, issue: zero, day: zero, ...before },
        }),
      });
      expect(result).toMatchObject({ ok: false, code: 'budget_exceeded', turns: 1 });
      if (!result.ok) expect(result.message).toContain(message);
      expect(harness.messages('budget_exceeded')).toHaveLength(1);
      expect(harness.messages('turn_started')).toHaveLength(1);
    },
  );

  it('a cost the agent reports mid-turn stops the turn at once, not at its end', async () => {
    const { result, harness, elapsedMs } = await run({
      prompt: '@cost 1.50 USD\n@sleep 20000\n@write late.txt never',
      budget: budget({ attempt: { cost: '1.00' } }),
    });
    expect(result).toMatchObject({ ok: false, code: 'budget_exceeded' });
    if (!result.ok) expect(result.message).toContain('attempt cost 1.5000 of 1.00');
    expect(elapsedMs).toBeLessThan(10_000);
    expect(harness.messages('budget_exceeded')[0]).toMatchObject({
      scope: 'attempt',
      measure: 'cost',
    });
  });

  it('a limit spent before the attempt starts no agent at all', async () => {
    const { result, harness } = await run({
      prompt: '@usage 1 1',
      budget: budget(
        { run: { tokens: 1000 } },
        { spentBefore: { run: { tokens: 1000 }, issue: zero, day: zero } },
      ),
    });
    expect(result).toMatchObject({ ok: false, code: 'budget_exceeded', turns: 0 });
    expect(harness.messages('session_started')).toHaveLength(0);
  });

  it('the warn ratio is said once, in the next prompt and as a record', async () => {
    const { result, harness, prompts } = await run({
      prompt: '@usage 500 350\n@turn 2: @usage 10 10\n@turn 3: @usage 10 10',
      maxTurns: 3,
      budget: budget({ attempt: { tokens: 1000 } }),
    });
    expect(result).toMatchObject({ ok: true, turns: 3 });
    expect(harness.messages('budget_warning')).toEqual([
      expect.objectContaining({ scope: 'attempt', measure: 'tokens', spent: 850, limit: 1000 }),
    ]);
    const [, second, third] = await prompts();
    expect(second).toContain('--- budget ---');
    expect(second).toContain('attempt tokens 850 of 1000');
    expect(third).not.toContain('--- budget ---');
  });

  it('prices the turns of a model in the table, cached input at its own price', async () => {
    const { result, harness } = await run({
      prompt: '@usage 1000000 100000 400000',
      flags: '--model scripted-large-2',
      budget: budget(
        {},
        {
          prices: {
            currency: 'USD',
            models: { 'scripted-large': { input: 3, cachedInput: 0.3, output: 15 } },
          },
        },
      ),
    });
    expect(result).toMatchObject({ ok: true });
    // 600k fresh × 3 + 400k cached × 0.3 + 100k out × 15, per million.
    expect(result.usage).toEqual({
      inputTokens: 1_000_000,
      outputTokens: 100_000,
      totalTokens: 1_100_000,
      cachedInputTokens: 400_000,
      cost: '3.42',
      currency: 'USD',
      model: 'scripted-large-2',
    });
    expect(harness.messages('session_started')[0]).toMatchObject({ model: 'scripted-large-2' });
  });

  it('an agent that reports no usage is said to, once, and is not stopped', async () => {
    const { result, harness } = await run({
      prompt: '@say hello',
      maxTurns: 2,
      budget: budget({ attempt: { tokens: 10 } }),
    });
    expect(result).toMatchObject({ ok: true, turns: 2 });
    expect(harness.messages('usage_unreported')).toHaveLength(1);
  });

  it('ignores a report that goes backwards and says so once', async () => {
    const { result, harness } = await run({
      prompt: '@cost 0.5 USD\n@cost 0.2 USD\n@cost 0.1 USD',
      budget: budget({ attempt: { cost: '1' } }),
    });
    expect(result).toMatchObject({ ok: true });
    const said = harness.events
      .filter((event) => event.type === 'stderr')
      .map((event) => (typeof event.message === 'string' ? event.message : ''));
    expect(said.filter((line) => line.includes('usage report ignored'))).toHaveLength(1);
  });
});
