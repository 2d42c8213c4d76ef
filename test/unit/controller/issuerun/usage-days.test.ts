import { describe, expect, it } from 'vitest';
import type { IssueRunStatus, SlotStatus } from '../../../../src/api/index.js';
import { carryUsage } from '../../../../src/controller/issuerun/usage-days.js';

const DAY = '2026-12-03';
const slot = (attempt: number, tokens: number, cost?: string): SlotStatus => ({
  slot: 0,
  phase: 'Running',
  reason: 'Running',
  message: '',
  podName: `run-0-${attempt}`,
  attempt,
  turns: 1,
  usage: {
    inputTokens: tokens,
    outputTokens: 0,
    totalTokens: tokens,
    ...(cost ? { cost, currency: 'USD' } : {}),
  },
});
const status = (slots: SlotStatus[], extra: Partial<IssueRunStatus> = {}): IssueRunStatus => ({
  slots,
  ...extra,
});

describe('carryUsage', () => {
  it.each([
    ['a first report counts whole', undefined, [slot(1, 100)], [], [{ day: DAY, tokens: 100 }]],
    [
      'growth of the same attempt counts, cost too',
      status([slot(1, 100, '0.1')], { usageDays: [{ day: DAY, tokens: 100, cost: '0.1' }] }),
      [slot(1, 250, '0.3')],
      [],
      [{ day: DAY, tokens: 250, cost: '0.3' }],
    ],
    [
      'a log read again from its start counts nothing twice',
      status([slot(1, 250)], { usageDays: [{ day: DAY, tokens: 250 }] }),
      [slot(1, 40)],
      [],
      [{ day: DAY, tokens: 250 }],
    ],
    [
      "a new attempt's usage counts whole",
      status([slot(1, 250)], { usageDays: [{ day: DAY, tokens: 250 }] }),
      [slot(2, 30)],
      [],
      [{ day: DAY, tokens: 280 }],
    ],
    [
      "an ended attempt's last turns count before the retry replaces it",
      status([slot(1, 100)], { usageDays: [{ day: DAY, tokens: 100 }] }),
      [slot(2, 0)],
      [slot(1, 160)],
      [{ day: DAY, tokens: 160 }],
    ],
  ] as const)('%s', (_name, base, slots, ended, days) => {
    const next = carryUsage(status([...slots]), base, DAY, [...ended]);
    expect(next.usageDays).toEqual(days);
  });

  it("keeps a slot's usage from going down within its attempt, and sums the run's", () => {
    const next = carryUsage(status([slot(1, 40)]), status([slot(1, 250, '0.5')]), DAY);
    expect(next.slots?.[0]?.usage?.totalTokens).toBe(250);
    expect(next.usage).toMatchObject({ totalTokens: 250, cost: '0.5', currency: 'USD' });
  });

  it('counting twice from the same base adds once', () => {
    const base = status([slot(1, 100)], { usageDays: [{ day: DAY, tokens: 100 }] });
    const once = carryUsage(status([slot(1, 150)]), base, DAY);
    const again = carryUsage(status([slot(1, 150)]), once, DAY);
    expect(again.usageDays).toEqual([{ day: DAY, tokens: 150 }]);
  });
});
