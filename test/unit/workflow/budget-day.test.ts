import { describe, expect, it } from 'vitest';
import { budgetDay, isTimeZone, nextDayStart } from '../../../src/workflow/budget-day.js';
import { eachCase } from '../../support/cases.js';

/** The budget day of the instant `at` (ISO text) in `timeZone`. */
const dayOf = (at: string, timeZone: string): string => budgetDay(new Date(at), timeZone);

describe('budgetDay', () => {
  eachCase('%s in %s is %s', dayOf, [
    ['2026-06-15T23:59:59.999Z', 'UTC', '2026-06-15'],
    ['2026-06-16T00:00:00.000Z', 'UTC', '2026-06-16'],
    // Paris is UTC+2 in summer: 21:59Z is 23:59 local, 22:00Z is midnight
    ['2026-06-15T21:59:59.999Z', 'Europe/Paris', '2026-06-15'],
    ['2026-06-15T22:00:00.000Z', 'Europe/Paris', '2026-06-16'],
    // and UTC+1 in winter
    ['2026-01-10T22:59:59.999Z', 'Europe/Paris', '2026-01-10'],
    ['2026-01-10T23:00:00.000Z', 'Europe/Paris', '2026-01-11'],
    // New York is UTC-5 in winter: 04:59Z is still the day before
    ['2026-01-11T04:59:59.999Z', 'America/New_York', '2026-01-10'],
    ['2026-01-11T05:00:00.000Z', 'America/New_York', '2026-01-11'],
    // and UTC-4 in summer
    ['2026-07-01T03:59:59.999Z', 'America/New_York', '2026-06-30'],
    ['2026-07-01T04:00:00.000Z', 'America/New_York', '2026-07-01'],
    // the year turns
    ['2026-12-31T23:30:00.000Z', 'Europe/Paris', '2027-01-01'],
  ]);
});

describe('budgetDay remembered across calls', () => {
  // The day a zone was last asked about is remembered with where it ends: walking instants
  // forwards, backwards and across clock changes must answer what a fresh formatter says.
  it.each(['UTC', 'Europe/Paris', 'Asia/Kathmandu', 'America/St_Johns'])('%s', (timeZone) => {
    const fresh = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    const start = Date.parse('2026-03-27T00:00:00.000Z');
    const forwards = Array.from({ length: 200 }, (_, step) => start + step * 37 * 60_000);
    const order = [...forwards, ...[...forwards].reverse(), ...forwards.filter((_, i) => i % 3)];
    const wrong = order.filter(
      (at) => budgetDay(new Date(at), timeZone) !== fresh.format(new Date(at)),
    );
    expect(wrong.map((at) => new Date(at).toISOString())).toEqual([]);
  });
});

describe('nextDayStart', () => {
  it.each<[string, string, string, string]>([
    ['UTC, mid-day', '2026-06-15T12:34:56.789Z', 'UTC', '2026-06-16T00:00:00.000Z'],
    ['UTC, one ms before midnight', '2026-06-15T23:59:59.999Z', 'UTC', '2026-06-16T00:00:00.000Z'],
    ['UTC, at midnight', '2026-06-16T00:00:00.000Z', 'UTC', '2026-06-17T00:00:00.000Z'],
    ['Paris in summer', '2026-06-15T08:00:00.000Z', 'Europe/Paris', '2026-06-15T22:00:00.000Z'],
    // 2026-03-29 in Paris has 23 hours: the clocks go from 02:00 to 03:00 (UTC+1 → UTC+2)
    [
      'Paris, the day the clocks go forward',
      '2026-03-29T00:30:00.000Z',
      'Europe/Paris',
      '2026-03-29T22:00:00.000Z',
    ],
    [
      'Paris, the day before the clocks go forward',
      '2026-03-28T12:00:00.000Z',
      'Europe/Paris',
      '2026-03-28T23:00:00.000Z',
    ],
    // 2026-10-25 in Paris has 25 hours (UTC+2 → UTC+1)
    [
      'Paris, the day the clocks go back',
      '2026-10-25T01:30:00.000Z',
      'Europe/Paris',
      '2026-10-25T23:00:00.000Z',
    ],
    // 2026-11-01 in New York has 25 hours: 02:00 EDT becomes 01:00 EST
    [
      'New York, the day the clocks go back',
      '2026-11-01T05:30:00.000Z',
      'America/New_York',
      '2026-11-02T05:00:00.000Z',
    ],
    [
      'New York, the evening before the clocks go back',
      '2026-11-01T03:00:00.000Z',
      'America/New_York',
      '2026-11-01T04:00:00.000Z',
    ],
    // 2026-03-08 in New York has 23 hours (EST → EDT)
    [
      'New York, the day the clocks go forward',
      '2026-03-08T06:00:00.000Z',
      'America/New_York',
      '2026-03-09T04:00:00.000Z',
    ],
  ])('%s: %s in %s → %s', (_name, at, timeZone, next) => {
    const start = nextDayStart(new Date(at), timeZone);
    expect(start.toISOString()).toBe(next);
    // exactly the next local midnight: one ms before is still the old day
    expect(budgetDay(new Date(start.getTime() - 1), timeZone)).toBe(
      budgetDay(new Date(at), timeZone),
    );
    expect(budgetDay(start, timeZone)).not.toBe(budgetDay(new Date(at), timeZone));
  });
});

describe('isTimeZone', () => {
  eachCase('%j → %s', isTimeZone, [
    ['UTC', true],
    ['Europe/Paris', true],
    ['America/New_York', true],
    ['Mars/Olympus', false],
    ['', false],
  ]);
});
