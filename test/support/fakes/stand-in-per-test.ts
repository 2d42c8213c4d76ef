// A stand-in harness made by the test that needs it and checked after each test.
import { afterEach, expect } from 'vitest';

/**
 * `start` (the function returned) makes a harness for the test that calls it; after each test
 * `stop` ends its stand-in, and the test fails if the stand-in saw a request or gave an answer
 * that the API's description does not document.
 */
export function standInPerTest<
  Args extends unknown[],
  H extends { standIn: { violations: unknown[] } },
>(
  make: (...args: Args) => Promise<H>,
  stop: (standIn: H['standIn']) => Promise<void>,
): (...args: Args) => Promise<H> {
  let current: H | undefined;
  afterEach(async () => {
    const standIn = current?.standIn;
    current = undefined;
    if (standIn === undefined) return;
    await stop(standIn);
    expect(standIn.violations).toEqual([]);
  });
  return async (...args) => {
    current = await make(...args);
    return current;
  };
}
