import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { writeInput } from '../../support/child-input.js';

const run = promisify(execFile);

/**
 * Holds this thread the way a loaded machine does between a spawn and the next line: the
 * child runs (and may exit) while this process has not yet written its input nor noticed
 * the exit. That window is where a test's write to a child that does not read met EPIPE.
 */
function preempted(ms = 200): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

const INPUT = 'protocol=https\nhost=git.example.com\n\n';

describe('writing to a child that exits without reading', () => {
  it('is an EPIPE on stdin when written plainly (the race the helper is for)', async () => {
    const child = spawn('true', [], { stdio: ['pipe', 'ignore', 'ignore'] });
    const error = new Promise<string | undefined>((resolve) => {
      child.stdin.on('error', (e: NodeJS.ErrnoException) => resolve(e.code));
      child.stdin.on('close', () => setTimeout(() => resolve(undefined), 50));
    });
    preempted();
    child.stdin.end(INPUT);
    expect(await error).toBe('EPIPE');
  });

  it.each([
    ['exits at once', 'true', [], ''],
    ['exits at once, status 3', 'sh', ['-c', 'exit 3'], ''],
    ['reads it', 'cat', [], INPUT],
  ])(
    'writeInput settles for a child that %s, and the run tells the rest',
    async (_, file, args, out) => {
      const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'ignore'] });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      preempted();
      await expect(writeInput(child.stdin, INPUT)).resolves.toBeUndefined();
      const status = await closed;
      expect(stdout).toBe(out);
      expect(status).toBe(file === 'sh' ? 3 : 0);
    },
  );

  it('with execFile: the helper that exits for `store` gives its (empty) output', async () => {
    const pending = run('sh', ['-c', '[ "$1" = get ] || exit 0; cat', 'helper', 'store']);
    preempted();
    const [{ stdout }] = await Promise.all([pending, writeInput(pending.child.stdin, INPUT)]);
    expect(stdout).toBe('');
  });

  it('leaves stdin open with end: false, for a child that keeps reading', async () => {
    const child = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await writeInput(child.stdin, 'one\n', { end: false });
    await expect.poll(() => stdout).toBe('one\n');
    expect(child.exitCode).toBeNull();
    await writeInput(child.stdin, 'two\n');
    await new Promise((resolve) => child.on('close', resolve));
    expect(stdout).toBe('one\ntwo\n');
  });

  it('refuses a child started without a stdin pipe, saying so', async () => {
    const child = spawn('true', [], { stdio: ['ignore', 'ignore', 'ignore'] });
    await expect(writeInput(child.stdin, INPUT)).rejects.toThrow(
      'writeInput: the child was started without a stdin pipe',
    );
  });
});
