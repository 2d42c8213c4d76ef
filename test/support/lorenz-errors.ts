// The LorenzError a call fails with, for tests that look into its code, message and detail.
import { LorenzError } from '../../src/workflow/errors.js';

/** The LorenzError the promise rejects with; a fulfilment or any other error fails the test. */
export async function failureOf(promise: Promise<unknown>): Promise<LorenzError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LorenzError) return error;
    throw error;
  }
  throw new Error('expected a LorenzError');
}

/** The LorenzError the call throws; a return or any other error fails the test. */
export function failureOfSync(run: () => unknown): LorenzError {
  try {
    run();
  } catch (error) {
    if (error instanceof LorenzError) return error;
    throw error;
  }
  throw new Error('expected a LorenzError');
}

/** Everything an error carries that could reach a log, a condition or an Event. */
export const errorText = (error: LorenzError): string =>
  `${error.message}\n${JSON.stringify(error.detail)}\n${error.stack ?? ''}`;
