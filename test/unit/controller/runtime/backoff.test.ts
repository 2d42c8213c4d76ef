// The controller's one backoff function: every retry schedule goes through it, so its
// edges (the first retry, the cap, counts far past any cap, nonsense counts) hold for all.
import { describe, expect, it } from 'vitest';
import { exponentialDelay } from '../../../../src/controller/runtime/backoff.js';
import { retryBackoffMs } from '../../../../src/controller/issuerun/retry.js';
import {
  LOG_READ_RETRY_BASE_MS,
  LOG_READ_RETRY_MAX_MS,
} from '../../../../src/controller/issuerun/log-follower.js';
import { eachNamedCase } from '../../../support/cases.js';

describe('exponentialDelay', () => {
  eachNamedCase('%s (failures %d, base %d, cap %d → %d)', exponentialDelay, [
    ['the first retry waits the base', 0, 10, 1000, 10],
    ['the second doubles it', 1, 10, 1000, 20],
    ['the third doubles again', 2, 10, 1000, 40],
    ['just below the cap', 6, 10, 1000, 640],
    ['the cap holds', 7, 10, 1000, 1000],
    ['a cap below the base wins', 0, 10, 5, 5],
    ['2^52 is still a number', 52, 1, Number.MAX_VALUE, 2 ** 52],
    ['past 2^52 the cap, not Infinity', 53, 1, Number.MAX_VALUE, Number.MAX_VALUE],
    ['a huge count is the cap', 1e9, 10, 1000, 1000],
    ['Infinity is the cap', Infinity, 10, 1000, 1000],
    ['a base of 0 far past 2^1024 is the cap, not NaN', 2000, 0, 1000, 1000],
    ['a negative count waits the base', -1, 10, 1000, 10],
    ['NaN waits the base', NaN, 10, 1000, 10],
    ['a fractional count rounds down', 2.7, 10, 1000, 40],
  ]);

  it.each([
    [0, 10_000],
    [1, 10_000],
    [2, 20_000],
    [31, 300_000],
    [10_000, 300_000],
  ])("a slot's retry after attempt %i waits %i ms (cap 300 s)", (attempt, wait) => {
    expect(retryBackoffMs(attempt, 300_000)).toBe(wait);
  });

  it('log reads back off 250 ms, 500 ms, … up to 5 s', () => {
    const waits = [0, 1, 2, 3, 4, 5].map((failures) =>
      exponentialDelay(failures, LOG_READ_RETRY_BASE_MS, LOG_READ_RETRY_MAX_MS),
    );
    expect(waits).toEqual([250, 500, 1000, 2000, 4000, 5000]);
  });
});
