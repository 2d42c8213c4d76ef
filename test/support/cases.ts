// A pure function's table of cases, one test per row: the call and the comparison are written
// once here instead of under each table, so a table test reads as its rows. A table whose
// test does more than compare one call's result (a throw, a second call, a side effect) stays
// a plain it.each.
import { expect, it } from 'vitest';

/**
 * One test per row `[argument…, expected]`: `fn(argument…)` equals `expected` (toEqual: for a
 * primitive that is Object.is, as toBe). `title` is an it.each title, its placeholders
 * filled from the row (`%s`, `%j`, …).
 */
export function eachCase<A, R>(
  title: string,
  fn: (a: A) => R,
  rows: readonly (readonly [A, R])[],
): void;
export function eachCase<A, B, R>(
  title: string,
  fn: (a: A, b: B) => R,
  rows: readonly (readonly [A, B, R])[],
): void;
export function eachCase<A, B, C, R>(
  title: string,
  fn: (a: A, b: B, c: C) => R,
  rows: readonly (readonly [A, B, C, R])[],
): void;
export function eachCase(title: string, fn: Call, rows: readonly (readonly unknown[])[]): void {
  it.each(rows.map((row) => [...row]))(title, (...row: unknown[]) => compare(fn, row));
}

/** The same, each row starting with its name (for the title only). */
export function eachNamedCase<A, R>(
  title: string,
  fn: (a: A) => R,
  rows: readonly (readonly [string, A, R])[],
): void;
export function eachNamedCase<A, B, R>(
  title: string,
  fn: (a: A, b: B) => R,
  rows: readonly (readonly [string, A, B, R])[],
): void;
export function eachNamedCase<A, B, C, R>(
  title: string,
  fn: (a: A, b: B, c: C) => R,
  rows: readonly (readonly [string, A, B, C, R])[],
): void;
export function eachNamedCase(
  title: string,
  fn: Call,
  rows: readonly (readonly unknown[])[],
): void {
  it.each(rows.map((row) => [...row]))(title, (_name: unknown, ...row: unknown[]) =>
    compare(fn, row),
  );
}

type Call = (...args: never[]) => unknown;

function compare(fn: Call, row: unknown[]): void {
  expect(fn(...(row.slice(0, -1) as never[]))).toEqual(row.at(-1));
}
