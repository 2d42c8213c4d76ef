import { describe, expect, it } from 'vitest';
import type { IssueRun } from '../../../../src/api/index.js';
import { dayBudget } from '../../../../src/controller/workflow/daily-spend.js';
import type { WorkflowBudget } from '../../../../src/workflow/budget.js';
import { issueRun, usedSlot, workflow } from '../../../support/fakes/objects.js';

const NOW = new Date('2026-12-03T22:30:00Z');
const spentToday = (day: string, tokens: number, model?: string): IssueRun =>
  issueRun({
    status: {
      usageDays: [{ day, tokens }],
      slots: [
        usedSlot(1, {
          inputTokens: tokens,
          outputTokens: 0,
          totalTokens: tokens,
          ...(model ? { model } : {}),
        }),
      ],
    },
  });
const config = (budget: WorkflowBudget | null) => ({ agent: { budget } });

describe('dayBudget', () => {
  it('nothing to show without a limit and without spend', () => {
    expect(
      dayBudget({
        workflow: workflow(),
        config: config(null),
        runs: [],
        prices: undefined,
        now: NOW,
      }),
    ).toEqual({
      status: undefined,
      spent: false,
    });
  });

  it.each([
    ['under the limit', 1000, false],
    ['at the limit', 900, true],
  ] as const)('%s: spent is %s', (_name, limit, spent) => {
    const day = dayBudget({
      workflow: workflow(),
      config: config({ day: { tokens: limit } }),
      runs: [spentToday('2026-12-03', 900)],
      prices: undefined,
      now: NOW,
    });
    expect(day.spent).toBe(spent);
    expect(day.status).toMatchObject({ day: '2026-12-03', timeZone: 'UTC', tokens: 900 });
    expect(day.status?.exhausted).toBe(spent ? true : undefined);
    expect(day.status?.nextDayTime).toBe('2026-12-04T00:00:00Z');
    if (spent) expect(day.resumeAt?.toISOString()).toBe('2026-12-04T00:00:00.000Z');
  });

  it('counts the day in its time zone: 22:30 UTC is already the next day in Tokyo', () => {
    const day = dayBudget({
      workflow: workflow({ budget: { timeZone: 'Asia/Tokyo' } }),
      config: config({ day: { tokens: 100 } }),
      runs: [spentToday('2026-12-03', 900)],
      prices: undefined,
      now: NOW,
    });
    expect(day.status).toMatchObject({ day: '2026-12-04', timeZone: 'Asia/Tokyo', tokens: 0 });
    expect(day.spent).toBe(false);
    expect(day.status?.nextDayTime).toBe('2026-12-04T15:00:00Z');
  });

  it('says which models the price table does not price, and a zone that is not one', () => {
    const day = dayBudget({
      workflow: workflow({ budget: { timeZone: 'Mars/Base' } }),
      config: config({ day: { tokens: 10_000 } }),
      runs: [spentToday('2026-12-03', 5, 'mystery-1')],
      prices: { currency: 'USD', models: { known: { input: 1, output: 1 } } },
      now: NOW,
    });
    expect(day.status?.message).toContain('PriceUnknown: mystery-1');
    expect(day.status?.message).toContain('unknown time zone "Mars/Base"');
    expect(day.status?.timeZone).toBe('UTC');
  });

  it('says which runs report no usage, once, in status', () => {
    const silent = issueRun({
      name: 'quiet-1',
      status: {
        slots: [usedSlot(1, undefined, 2)],
      },
    });
    const day = dayBudget({
      workflow: workflow(),
      config: config({ run: { tokens: 10 } }),
      runs: [silent],
      prices: undefined,
      now: NOW,
    });
    expect(day.status?.message).toBe(
      'UsageUnreported: the agents of quiet-1 report no usage; the limits cannot hold for them',
    );
  });
});
