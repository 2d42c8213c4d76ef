/**
 * Days of a daily budget (docs/budgets.md): a day is a calendar date in an IANA time zone
 * (UTC by default), so "the next day" is the next local midnight, daylight saving included.
 */
import { createBoundedCache, memoized } from './bounded-cache.js';

/** The answers for this many names at most (a hostile spec's could be many). */
const knownZones = createBoundedCache<string, boolean>(256);

/**
 * Whether the runtime knows the time zone (checked at load, so a typo is a config error).
 * Remembered: building a formatter to find out costs a tenth of a millisecond, and the
 * controllers ask on every Workflow reconcile and status write.
 */
export function isTimeZone(timeZone: string): boolean {
  return memoized(knownZones, timeZone, () => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone });
      return true;
    } catch {
      return false;
    }
  });
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** The day `at` falls on in `timeZone`, as YYYY-MM-DD. */
export function budgetDay(at: Date, timeZone: string): string {
  return formatter(timeZone).format(at);
}

/**
 * When the day after `at`'s day starts in `timeZone`: the first instant whose budgetDay
 * differs. Found by stepping an hour at a time then bisecting to the millisecond, which is
 * exact for every zone (offsets change on whole minutes) and needs no zone database of our own.
 */
export function nextDayStart(at: Date, timeZone: string): Date {
  const today = budgetDay(at, timeZone);
  let low = at.getTime();
  let high = low + 3_600_000;
  while (budgetDay(new Date(high), timeZone) === today) {
    low = high;
    high += 3_600_000;
  }
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (budgetDay(new Date(middle), timeZone) === today) low = middle;
    else high = middle;
  }
  return new Date(high);
}
