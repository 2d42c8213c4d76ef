// Writing to a child's stdin races the child's exit: a child that is allowed not to read
// (git's credential helper for `store`, a command that fails before reading) can exit before
// the write reaches the pipe, and the write then fails with EPIPE. With no 'error' listener
// on stdin that EPIPE is an unhandled error, which fails the whole vitest run rather than
// the test. Every test that feeds a child's stdin goes through here.

/** The part of a child's stdin this needs (a child_process stdin, or an executor's). */
export interface ChildStdin {
  write(chunk: string, callback: (error?: Error | null) => void): boolean;
  end(chunk: string, callback: (error?: Error | null) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Writes `input` to `stdin` (then closes it, unless `end` is false). Settles when the input
 * was handed to the pipe, or the child closed its end first (EPIPE: what the child did is
 * then told by its exit status and output, which the caller checks); any other error rejects.
 * The 'error' listener stays: a later EPIPE (the close after the write) is not unhandled.
 */
export function writeInput(
  stdin: ChildStdin | null | undefined,
  input: string,
  options: { end?: boolean } = {},
): Promise<void> {
  if (stdin === null || stdin === undefined) {
    return Promise.reject(new Error('writeInput: the child was started without a stdin pipe'));
  }
  return new Promise((resolve, reject) => {
    const settle = (error?: Error | null): void => {
      if (!error || (error as NodeJS.ErrnoException).code === 'EPIPE') resolve();
      else reject(error);
    };
    stdin.on('error', settle);
    if (options.end === false) stdin.write(input, settle);
    else stdin.end(input, settle);
  });
}
