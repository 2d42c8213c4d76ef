/**
 * Limits the kernel puts on what one exec may carry. Hooks run as `bash -lc <command>`, the
 * command a single argument, so a rendered hook (an issue description interpolated into it,
 * say) can be larger than Linux accepts; spawn then fails with a bare `E2BIG`. Checking
 * first lets the failure say which limit was hit.
 */

/** Linux's MAX_ARG_STRLEN: 32 pages of 4 KiB for one argument, its terminating NUL included. */
export const MAX_ARGUMENT_BYTES = 32 * 4096;

/** Why `text` cannot be passed as one exec argument on this platform, or null when it can. */
export function oversizedArgument(text: string, platform = process.platform): string | null {
  if (platform !== 'linux') return null;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes + 1 <= MAX_ARGUMENT_BYTES) return null;
  return (
    `command is ${bytes} bytes, over Linux's limit of ${MAX_ARGUMENT_BYTES - 1} bytes for one ` +
    `exec argument (MAX_ARG_STRLEN); pass large data through a file instead`
  );
}

/**
 * A spawn failure in words: E2BIG with an argument that fits means the arguments and the
 * environment together are over the total limit (ARG_MAX).
 */
export function describeSpawnFailure(message: string): string {
  if (!message.includes('E2BIG')) return message;
  return `${message}: the command and its environment together exceed the system's limit on exec arguments (ARG_MAX)`;
}
