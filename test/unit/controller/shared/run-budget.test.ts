import { describe, expect, it } from 'vitest';
import { composeRunBudget } from '../../../../src/controller/shared/run-budget.js';
import { nextAttempt } from '../../../../src/controller/issuerun/retry.js';
import { createPriceTableSource } from '../../../../src/controller/shared/price-table-source.js';
import { budgetAnswer } from '../../../../src/controller/tools/budget-answer.js';
import type { PriceTable, WorkflowBudget } from '../../../../src/workflow/budget.js';
import { FakeKubeClient } from '../../../support/fakes/controller.js';
import { issueRun, usedSlot, workflow } from '../../../support/fakes/objects.js';

const NOW = new Date('2026-12-03T10:00:00Z');
const PRICES: PriceTable = { currency: 'USD', models: { m: { input: 1, output: 2 } } };
const config = (budget: WorkflowBudget | null) => ({ agent: { budget } });
const spent = (uid: string, identifier: string, days: { day: string; tokens: number }[]) => {
  const made = issueRun({ uid, name: uid, status: { usageDays: days } });
  return { ...made, spec: { ...made.spec, issue: { ...made.spec.issue, identifier } } };
};

describe('composeRunBudget', () => {
  it('no limit and no price table: no budget (the runner only counts)', () => {
    const run = issueRun();
    expect(
      composeRunBudget({
        config: config(null),
        workflow: workflow(),
        run,
        runs: () => [run],
        prices: undefined,
        now: NOW,
      }),
    ).toBeUndefined();
  });

  it("gives the attempt what its run, its issue and the Workflow's day spent before it", () => {
    const own = spent('a', 'ENG-1', [
      { day: '2026-12-02', tokens: 100 },
      { day: '2026-12-03', tokens: 10 },
    ]);
    const sameIssue = spent('b', 'ENG-1', [{ day: '2026-12-03', tokens: 20 }]);
    const other = spent('c', 'ENG-2', [{ day: '2026-12-03', tokens: 40 }]);
    const budget = composeRunBudget({
      config: config({ run: { tokens: 1000 }, issue: { tokens: 9999 }, day: { cost: '5' } }),
      // spec.budget overrides WORKFLOW.md field by field.
      workflow: workflow({ budget: { run: { tokens: 500 }, warnRatio: 0.5 } }),
      run: own,
      runs: () => [own, sameIssue, other],
      prices: PRICES,
      now: NOW,
    });
    expect(budget).toEqual({
      limits: {
        run: { tokens: 500 },
        issue: { tokens: 9999 },
        day: { cost: '5' },
        warnRatio: 0.5,
        timeZone: 'UTC',
      },
      spentBefore: { run: { tokens: 110 }, issue: { tokens: 130 }, day: { tokens: 70 } },
      day: '2026-12-03',
      prices: PRICES,
    });
  });
});

describe('composeRunBudget reads the runs only when a limit needs them', () => {
  it.each([
    ['prices only', null, false],
    ['an attempt limit', { attempt: { tokens: 10 } }, false],
    ['a run limit (the run itself)', { run: { tokens: 10 } }, false],
    ['an issue limit', { issue: { tokens: 10 } }, true],
    ['a day limit', { day: { tokens: 10 } }, true],
  ] as const)('%s: the runs read is %s', (_name, budget, read) => {
    let asked = false;
    const run = issueRun();
    composeRunBudget({
      config: config(budget),
      workflow: workflow(),
      run,
      runs: () => {
        asked = true;
        return [run];
      },
      prices: PRICES,
      now: NOW,
    });
    expect(asked).toBe(read);
  });
});

describe('budgetAnswer (budget_status)', () => {
  it('each scope: its limit, what was spent, what is left', () => {
    const run = issueRun({
      status: {
        slots: [usedSlot(2, { inputTokens: 60, outputTokens: 0, totalTokens: 60, cost: '0.25' })],
      },
    });
    const answer = budgetAnswer(
      {
        limits: { attempt: { tokens: 100 }, run: { cost: '1' }, warnRatio: 0.8, timeZone: 'UTC' },
        spentBefore: {
          run: { tokens: 300, cost: 0.75 },
          issue: { tokens: 300 },
          day: { tokens: 300 },
        },
        day: '2026-12-03',
        prices: PRICES,
      },
      run,
      2,
    );
    expect(answer).toEqual({
      scopes: {
        attempt: {
          limit: { tokens: 100 },
          spent: { tokens: 60, cost: '0.25' },
          left: { tokens: 40 },
        },
        run: { limit: { cost: '1' }, spent: { tokens: 300, cost: '0.75' }, left: { cost: '0.25' } },
      },
      warnRatio: 0.8,
      day: '2026-12-03',
      timeZone: 'UTC',
      currency: 'USD',
    });
  });

  it('no budget: says so', () => {
    expect(budgetAnswer(undefined, issueRun(), 1)).toMatchObject({ limits: null });
  });
});

describe('the price table source', () => {
  const configMap = (text: string) => ({ body: { data: { 'prices.yaml': text } } });

  it('reads the table, keeps the last good one over a bad edit, and says what is wrong', async () => {
    const client = new FakeKubeClient();
    let clock = 0;
    const source = createPriceTableSource({
      client,
      namespace: 'lorenz-system',
      name: 'lorenz-prices',
      refreshMs: 1000,
      now: () => clock,
    });
    client.answer({
      match: 'GET configmaps/lorenz-prices',
      answer: configMap('currency: EUR\nmodels:\n  m: { input: 1, output: 2 }\n'),
    });
    expect((await source.current())?.currency).toBe('EUR');
    client.answer({
      match: 'GET configmaps/lorenz-prices',
      answer: configMap('currency: EUR\nmodels:\n  m: { input: -1, output: 2 }\n'),
    });
    // Within the refresh interval: no read.
    expect((await source.current())?.currency).toBe('EUR');
    expect(client.summaries()).toHaveLength(1);
    clock = 2000;
    expect((await source.current())?.currency).toBe('EUR');
    expect(source.problem()).toContain('models.m.input');
  });

  it('a ConfigMap that is not there: no prices, said so', async () => {
    const source = createPriceTableSource({
      client: new FakeKubeClient(),
      namespace: 'n',
      name: 'p',
    });
    expect(await source.current()).toBeUndefined();
    expect(source.problem()).toContain('ConfigMap n/p does not exist');
  });
});

describe('retry after a budget', () => {
  it('a BudgetExceeded attempt is not tried again, even on a run that continues', () => {
    const run = issueRun({ spec: { retries: 5, continueWhileActive: true } });
    const outcome = {
      phase: 'Failed' as const,
      reason: 'BudgetExceeded' as const,
      message: 'm',
      finished: true,
      summary: null,
    };
    expect(nextAttempt(run, outcome, 1, true)).toBeNull();
    expect(nextAttempt(run, { ...outcome, reason: 'AgentFailed' }, 1, true)).toBe('retry');
  });
});
