import { errorMessage } from '../workflow/errors.js';

/** A mounted secret read at the runner's start, and the values the redactor must hide. */
export interface SecretRead<T> {
  /** What was read; undefined when nothing was asked for or the read failed. */
  value: T | undefined;
  /**
   * Why it could not be read. Kept, not thrown: the redactor is built from every secret
   * first, so the error is reported like any other, after nothing can leak.
   */
  error: Error | undefined;
  /** The secret texts in it (empty when nothing was read). */
  secrets: string[];
}

/**
 * Reads one mounted secret (the tools token, the git credentials, the SSH key) when its
 * source is given. A value whose secrets cannot be listed is kept with the error, so what it
 * holds open (a credentials directory) can still be disposed of.
 */
export async function readSecret<S, T>(
  source: S | undefined,
  read: (source: S) => Promise<T>,
  secretsOf: (value: T) => readonly string[] | Promise<readonly string[]>,
): Promise<SecretRead<T>> {
  const result: SecretRead<T> = { value: undefined, error: undefined, secrets: [] };
  if (source === undefined) return result;
  try {
    result.value = await read(source);
    result.secrets = [...(await secretsOf(result.value))];
  } catch (error) {
    result.error = error instanceof Error ? error : new Error(errorMessage(error));
  }
  return result;
}
