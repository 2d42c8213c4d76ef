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

const formatDay = (at: number, timeZone: string): string => formatter(timeZone).format(at);

/** A day a zone was last asked about: [from, until) are instants known to fall on it. */
interface KnownDay {
  day: string;
  from: number;
  until: number;
}
const knownDays = createBoundedCache<string, KnownDay>(64);

/**
 * The day `at` falls on in `timeZone`, as YYYY-MM-DD. Every status write asks, and a
 * formatter's answer costs tens of microseconds: UTC's day is read off the ISO string, and
 * another zone's day is remembered with where it ends (found once a day per zone).
 */
export function budgetDay(at: Date, timeZone: string): string {
  const time = at.getTime();
  if (timeZone === 'UTC' && Number.isFinite(time)) return at.toISOString().slice(0, 10);
  const known = knownDays.get(timeZone);
  if (known && time >= known.from && time < known.until) return known.day;
  const day = formatDay(time, timeZone);
  // Only a later day is remembered: an earlier instant (a past run's) costs one format and
  // leaves today's entry alone, so mixed instants never bisect again and again.
  if (Number.isFinite(time) && (!known || time >= known.until)) {
    knownDays.set(timeZone, { day, from: time, until: firstInstantAfter(time, day, timeZone) });
  }
  return day;
}

/**
 * The first instant after `at` whose day in `timeZone` is not `today`. Found by stepping an
 * hour at a time then bisecting to the millisecond, which is exact for every zone (offsets
 * change on whole minutes) and needs no zone database of our own.
 */
function firstInstantAfter(at: number, today: string, timeZone: string): number {
  let low = at;
  let high = low + 3_600_000;
  while (formatDay(high, timeZone) === today) {
    low = high;
    high += 3_600_000;
  }
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (formatDay(middle, timeZone) === today) low = middle;
    else high = middle;
  }
  return high;
}

/** When the day after `at`'s day starts in `timeZone`: the first instant whose budgetDay differs. */
export function nextDayStart(at: Date, timeZone: string): Date {
  const time = at.getTime();
  return new Date(firstInstantAfter(time, formatDay(time, timeZone), timeZone));
}
