import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BUDGET_TIME_ZONE,
  DEFAULT_WARN_RATIO,
  type WorkflowBudget,
} from '../../../src/workflow/budget.js';
import { mergeBudgetLimits } from '../../../src/workflow/budget-limits.js';

describe('mergeBudgetLimits', () => {
  it.each<[string, WorkflowBudget | null | undefined, WorkflowBudget | null | undefined]>([
    ['neither is set', undefined, undefined],
    ['both are null', null, null],
    ['both are empty', {}, {}],
    ['only the day and zone are set, no limit', { warnRatio: 0.5 }, { timeZone: 'Europe/Paris' }],
  ])('is null when %s', (_name, fromConfig, fromSpec) => {
    expect(mergeBudgetLimits(fromConfig, fromSpec)).toBeNull();
  });

  it('fills the defaults for warn ratio and time zone', () => {
    expect(mergeBudgetLimits({ run: { tokens: 100 } }, null)).toEqual({
      run: { tokens: 100 },
      warnRatio: DEFAULT_WARN_RATIO,
      timeZone: DEFAULT_BUDGET_TIME_ZONE,
    });
    expect(DEFAULT_WARN_RATIO).toBe(0.8);
    expect(DEFAULT_BUDGET_TIME_ZONE).toBe('UTC');
  });

  it('takes spec.budget alone when WORKFLOW.md has none', () => {
    expect(mergeBudgetLimits(null, { day: { cost: '40' }, timeZone: 'America/New_York' })).toEqual({
      day: { cost: '40' },
      warnRatio: DEFAULT_WARN_RATIO,
      timeZone: 'America/New_York',
    });
  });

  it('overrides field by field: per scope, per measure', () => {
    const fromConfig: WorkflowBudget = {
      attempt: { tokens: 100_000, cost: '1' },
      run: { tokens: 500_000 },
      issue: { cost: '10' },
      warnRatio: 0.7,
      timeZone: 'Europe/Paris',
    };
    const fromSpec: WorkflowBudget = {
      attempt: { cost: '0.5' },
      run: { cost: '3' },
      day: { tokens: 9_000_000 },
      warnRatio: 0.9,
    };
    expect(mergeBudgetLimits(fromConfig, fromSpec)).toEqual({
      // tokens from WORKFLOW.md, cost from the spec
      attempt: { tokens: 100_000, cost: '0.5' },
      // each measure from the one that set it
      run: { tokens: 500_000, cost: '3' },
      issue: { cost: '10' },
      day: { tokens: 9_000_000 },
      warnRatio: 0.9,
      timeZone: 'Europe/Paris',
    });
  });

  it('lets spec.budget lower a limit WORKFLOW.md set', () => {
    const merged = mergeBudgetLimits({ run: { tokens: 1_000_000 } }, { run: { tokens: 10 } });
    expect(merged?.run).toEqual({ tokens: 10 });
  });

  it('does not let an explicit undefined in the spec erase a WORKFLOW.md field', () => {
    const merged = mergeBudgetLimits(
      { run: { tokens: 5, cost: '2' } },
      { run: { tokens: undefined, cost: '1' } },
    );
    expect(merged?.run).toEqual({ tokens: 5, cost: '1' });
  });

  it('does not change its inputs', () => {
    const fromConfig: WorkflowBudget = { run: { tokens: 5 } };
    const fromSpec: WorkflowBudget = { run: { cost: '1' } };
    mergeBudgetLimits(fromConfig, fromSpec);
    expect(fromConfig).toEqual({ run: { tokens: 5 } });
    expect(fromSpec).toEqual({ run: { cost: '1' } });
  });
});
