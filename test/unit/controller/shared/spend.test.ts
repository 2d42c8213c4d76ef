import { describe, expect, it } from 'vitest';
import type { IssueRun, IssueRunStatus } from '../../../../src/api/index.js';
import { LEDGER_RUNS_KEPT } from '../../../../src/api/budget.js';
import {
  EARLIER_RUNS_KEY,
  addDayUsage,
  budgetTimeZone,
  dayLedger,
  issueSpend,
  ledgerTotal,
  runSpend,
} from '../../../../src/controller/shared/spend.js';
import { issueRun, workflow } from '../../../support/fakes/objects.js';

const DAY = '2026-12-03';
const run = (uid: string, identifier: string, status: IssueRunStatus): IssueRun => {
  const made = issueRun({ uid, name: uid, status });
  return { ...made, spec: { ...made.spec, issue: { ...made.spec.issue, identifier } } };
};

describe('runSpend', () => {
  it.each([
    ['nothing spent', {}, { tokens: 0 }],
    [
      'its days summed',
      {
        usageDays: [
          { day: '2026-12-02', tokens: 100, cost: '0.5' },
          { day: DAY, tokens: 50 },
        ],
      },
      { tokens: 150, cost: 0.5 },
    ],
    [
      'a run from before usageDays: its usage',
      { usage: { inputTokens: 5, outputTokens: 5, totalTokens: 10, cost: '0.01' } },
      { tokens: 10, cost: 0.01 },
    ],
  ] as const)('%s', (_name, status, spend) => {
    expect(runSpend(run('u', 'ENG-1', status as IssueRunStatus))).toEqual(spend);
  });
});

describe('dayLedger', () => {
  const today = (tokens: number, cost?: string) => ({
    usageDays: [{ day: DAY, tokens, ...(cost ? { cost } : {}) }],
  });

  it('takes each run of the day and keeps the deleted ones the ledger had', () => {
    const ledger = dayLedger(
      { day: DAY, timeZone: 'UTC', tokens: 0, runs: { gone: { issue: 'ENG-9', tokens: 70 } } },
      [run('a', 'ENG-1', today(100, '0.2')), run('b', 'ENG-2', {})],
      DAY,
    );
    expect(ledger).toEqual({
      gone: { issue: 'ENG-9', tokens: 70 },
      a: { issue: 'ENG-1', tokens: 100, cost: '0.2' },
    });
    expect(ledgerTotal(ledger)).toEqual({ tokens: 170, cost: 0.2 });
  });

  it('never goes down: a run read with less than the ledger keeps the ledger', () => {
    const ledger = dayLedger(
      { day: DAY, timeZone: 'UTC', tokens: 0, runs: { a: { issue: 'ENG-1', tokens: 300 } } },
      [run('a', 'ENG-1', today(100))],
      DAY,
    );
    expect(ledger.a?.tokens).toBe(300);
  });

  it("starts empty on another day: yesterday's ledger does not count", () => {
    const ledger = dayLedger(
      { day: '2026-12-02', timeZone: 'UTC', tokens: 0, runs: { a: { issue: 'E', tokens: 9 } } },
      [],
      DAY,
    );
    expect(ledger).toEqual({});
  });

  it(`keeps ${LEDGER_RUNS_KEPT} runs and sums the rest, the total unchanged`, () => {
    const runs = Array.from({ length: LEDGER_RUNS_KEPT + 20 }, (_, n) =>
      run(`r${n}`, `ENG-${n}`, today(n + 1)),
    );
    const ledger = dayLedger(undefined, runs, DAY);
    expect(Object.keys(ledger)).toHaveLength(LEDGER_RUNS_KEPT);
    expect(ledger[EARLIER_RUNS_KEY]?.tokens).toBeGreaterThan(0);
    const n = LEDGER_RUNS_KEPT + 20;
    expect(ledgerTotal(ledger).tokens).toBe((n * (n + 1)) / 2);
  });
});

describe('issueSpend', () => {
  it("counts the issue's runs whole and the day's ledger entries of its deleted runs", () => {
    const runs = [
      run('a', 'ENG-1', { usageDays: [{ day: '2026-12-01', tokens: 40 }] }),
      run('b', 'ENG-2', { usageDays: [{ day: DAY, tokens: 1000 }] }),
    ];
    const recorded = {
      day: DAY,
      timeZone: 'UTC',
      tokens: 0,
      runs: {
        a: { issue: 'ENG-1', tokens: 40 },
        gone: { issue: 'ENG-1', tokens: 5 },
        other: { issue: 'ENG-3', tokens: 7 },
      },
    };
    expect(issueSpend(runs, 'ENG-1', recorded, DAY)).toEqual({ tokens: 45 });
  });
});

describe('addDayUsage', () => {
  it.each([
    ['a first day', undefined, DAY, { tokens: 10 }, [{ day: DAY, tokens: 10 }]],
    [
      'the same day adds up, cost included',
      [{ day: DAY, tokens: 10, cost: '0.1' }],
      DAY,
      { tokens: 5, cost: 0.05 },
      [{ day: DAY, tokens: 15, cost: '0.15' }],
    ],
    [
      'the newest days kept, oldest first',
      [
        { day: '2026-12-01', tokens: 1 },
        { day: '2026-12-02', tokens: 2 },
      ],
      DAY,
      { tokens: 3 },
      [
        { day: '2026-12-02', tokens: 2 },
        { day: DAY, tokens: 3 },
      ],
    ],
  ] as const)('%s', (_name, days, day, spend, want) => {
    expect(addDayUsage(days, day, spend, 2)).toEqual(want);
  });
});

describe('budgetTimeZone', () => {
  it.each([
    ['spec.budget first', { budget: { timeZone: 'Asia/Tokyo' } }, 'Europe/Paris', 'Asia/Tokyo'],
    ['then what the status recorded', {}, 'Europe/Paris', 'Europe/Paris'],
    ['a zone that is not one: UTC', { budget: { timeZone: 'Mars/Base' } }, undefined, 'UTC'],
  ] as const)('%s', (_name, spec, recorded, want) => {
    const found = workflow(spec, {
      ...(recorded ? { budget: { day: DAY, timeZone: recorded, tokens: 0 } } : {}),
    });
    expect(budgetTimeZone(found)).toBe(want);
  });
});
