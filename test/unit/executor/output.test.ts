import { describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/executor/local.js';
import {
  codePoints,
  createOutputCapture,
  withoutFinalNewline,
} from '../../../src/executor/output-capture.js';
import { runHook } from '../../../src/workspace/hooks.js';
import { hookRequest } from '../../support/hook-request.js';
import { useIssueWorkspace } from '../../support/workspace.js';

const place = useIssueWorkspace('lorenz-output-', 'ENG-1');

describe('output capture', () => {
  it.each([
    ['ascii', ['abc', 'def', 'ghi'], 4, 'abcd', 5],
    ['a surrogate pair is one character, never split', ['a😀b', '😀😀'], 2, 'a😀', 3],
    ['everything when under the limit', ['x', 'y'], 10, 'xy', 0],
    ['nothing kept with a limit of 0', ['héllo'], 0, '', 5],
  ])('%s', (_case, chunks, limit, kept, dropped) => {
    const capture = createOutputCapture(limit);
    for (const chunk of chunks) capture.push(chunk);
    expect({ text: capture.text, dropped: capture.dropped }).toEqual({ text: kept, dropped });
  });

  it.each([
    [['a\n'], 'a', 0],
    [['a\n', '\n'], 'a\n', 0],
    [['a\n', 'b'], 'a\nb', 0],
    [['a', '\n', ''], 'a', 0],
    [['\n'], '', 0],
    [['abcd', 'e\n'], 'abc', 2],
    [['abc\n'], 'abc', 0],
    [['abc\n', '\n'], 'abc', 1],
  ])('without the final newline: %j → %j, %d dropped', (chunks, text, dropped) => {
    const capture = withoutFinalNewline(createOutputCapture(3));
    for (const chunk of chunks) capture.push(chunk);
    expect({ text: capture.text, dropped: capture.dropped }).toEqual({ text, dropped });
  });

  it('counts code points as Array.from does', () => {
    for (const text of ['', 'abc', '😀', 'a😀b😀', '\ud800', '\udc00x', 'é']) {
      expect(codePoints(text)).toBe(Array.from(text).length);
    }
  });
});

describe('a hook that prints 200 MB', () => {
  it('reports the first 4096 characters and the count of the rest, in bounded memory', async () => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    // Events are dropped, so that the memory measured is the hook's output handling alone.
    const { request } = hookRequest(
      createLocalExecutor(),
      place,
      'after_run',
      "head -c 200000000 /dev/zero | tr '\\0' x",
      { emit: () => {}, timeoutMs: 60_000 },
    );
    const message = await runHook(request).finally(() => clearInterval(sampler));
    expect(message).toMatchObject({
      status: 'completed',
      output: `${'x'.repeat(4096)}\n[truncated ${200_000_000 - 4096} chars]`,
      outputTruncated: true,
    });
    // Buffering it whole would take 400 MB or more (UTF-16), and more again to join it.
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  });
});
