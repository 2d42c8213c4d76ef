import { describe, expect, it } from 'vitest';
import { parseRecordLine } from '../../../src/controller/events/records.js';
import { createLocalExecutor } from '../../../src/executor/local.js';
import { createRedactor } from '../../../src/runner/redact.js';
import { runHook, type HookRunCounter } from '../../../src/workspace/hooks.js';
import {
  createOutputStream,
  HOOK_OUTPUT_RECORD_CHARS,
} from '../../../src/workspace/output-stream.js';
import type { HookOutputMessage, LorenzEvent } from '../../../src/workflow/events.js';
import { hookRequest } from '../../support/hook-request.js';
import { useIssueWorkspace } from '../../support/workspace.js';

const place = useIssueWorkspace('lorenz-hook-output-', 'ENG-1');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the hook output stream', () => {
  // [case, chunks with pauses (a number is a pause in ms), records expected]
  it.each<[string, (string | number)[], string[]]>([
    ['whole lines that arrive together are one record', ['a\nb\n'], ['a\nb\n']],
    ['lines that arrive apart are records apart', ['a\n', 'b\n'], ['a\n', 'b\n']],
    ['a line in pieces waits for its end', ['ab', 'c\nd', 'e\n'], ['abc\n', 'de\n']],
    ['a partial line is flushed after a quiet spell', ['ab', 300, 'c\n'], ['ab', 'c\n']],
    ['a partial line is flushed at the end', ['a\nb'], ['a\n', 'b']],
    ['nothing for no output', [], []],
  ])('%s', async (_case, script, expected) => {
    const records: string[] = [];
    const stream = createOutputStream({ onText: (text) => records.push(text) });
    for (const step of script) {
      if (typeof step === 'number') await sleep(step);
      else stream.push(step);
    }
    stream.end();
    expect(records).toEqual(expected);
  });

  it('flushes a partial line that never rests once it has waited a second (a progress bar)', async () => {
    const records: { at: number; text: string }[] = [];
    const started = performance.now();
    const stream = createOutputStream({
      onText: (text) => records.push({ at: performance.now() - started, text }),
    });
    for (let tick = 0; tick < 15; tick += 1) {
      stream.push(`\r${tick}%`);
      await sleep(100);
    }
    expect(records.length).toBeGreaterThanOrEqual(1);
    expect(records[0]?.at).toBeGreaterThan(900);
    stream.end();
    expect(records.map((record) => record.text).join('')).toBe(
      Array.from({ length: 15 }, (_, tick) => `\r${tick}%`).join(''),
    );
  });

  it('cuts a line longer than a record into records, never inside a surrogate pair', () => {
    const records: string[] = [];
    const stream = createOutputStream({ onText: (text) => records.push(text), recordChars: 4 });
    stream.push('abc😀def😀gh\n');
    stream.end();
    expect(records.join('')).toBe('abc😀def😀gh\n');
    expect(records.every((text) => text.length <= 4 && !/[\ud800-\udbff]$/.test(text))).toBe(true);
  });

  it.each([
    ['a secret written in two pieces', ['pw=sec', 300, 'ret-value\n'], 'pw=[redacted]\n'],
    [
      'a secret cut by the record limit',
      [`${'x'.repeat(30)}secret-value\n`],
      `${'x'.repeat(30)}[redacted]\n`,
    ],
    ['a prefix that turns out not to be one', ['sec', 300, 'ond\n'], 'second\n'],
  ])('holds back what may begin a secret: %s', async (_case, script, expected) => {
    const redact = createRedactor(['secret-value']);
    const records: string[] = [];
    const stream = createOutputStream({
      onText: (text) => records.push(redact.text(text)),
      holdBack: (text) => redact.secretPrefixAtEnd(text),
      recordChars: 36,
    });
    for (const step of script) {
      if (typeof step === 'number') await sleep(step);
      else stream.push(step);
    }
    stream.end();
    expect(records.join('')).toBe(expected);
  });

  it.each([
    ['', 0],
    ['abc', 0],
    ['pw=s', 1],
    ['pw=secret-valu', 11],
    ['pw=secret-value', 0],
    ['ssss', 1],
  ])('secretPrefixAtEnd(%j) is %d', (text, length) => {
    expect(createRedactor(['secret-value']).secretPrefixAtEnd(text)).toBe(length);
  });
});

type Clocked = { at: number; event: LorenzEvent };

async function hookEvents(command: string, extra: { runs?: HookRunCounter } = {}) {
  const events: Clocked[] = [];
  const { request } = hookRequest(createLocalExecutor(), place, 'after_run', command, {
    emit: (event) => events.push({ at: performance.now(), event }),
    timeoutMs: 60_000,
    ...extra,
  });
  const message = await runHook(request);
  const outputs = events.filter(
    (entry): entry is { at: number; event: { type: 'hook_output'; message: HookOutputMessage } } =>
      entry.event.type === 'hook_output',
  );
  return { events, outputs, message };
}

describe.runIf(process.platform === 'linux')('hook_output records of a real hook', () => {
  it('shows lines printed slowly as records of their own, as they come, before the end', async () => {
    const { events, outputs } = await hookEvents(
      'echo one; sleep 0.4; echo two >&2; sleep 0.4; printf three',
    );
    expect(outputs.map(({ event }) => event.message)).toEqual([
      { hookName: 'after_run', slot: 0, seq: 0, text: 'one\n' },
      { hookName: 'after_run', slot: 0, seq: 0, text: 'two\n' },
      { hookName: 'after_run', slot: 0, seq: 0, text: 'three' },
    ]);
    const kinds = events.map(({ event }) =>
      event.type === 'hook_execution' ? event.message.status : event.type,
    );
    expect(kinds).toEqual(['started', 'hook_output', 'hook_output', 'hook_output', 'completed']);
    // Streamed while the hook ran: each line about 400 ms after the previous one.
    const [one, two] = outputs;
    expect((two?.at ?? 0) - (one?.at ?? 0)).toBeGreaterThan(300);
  });

  it('numbers each hook run on the shared count', async () => {
    const runs = { next: 0 };
    await hookEvents('echo first', { runs });
    const { outputs } = await hookEvents('echo second', { runs });
    expect(outputs.map(({ event }) => event.message.seq)).toEqual([1]);
  });

  it('streams a 1 MB line in records whose concatenation is the line; the record stays at 4096', async () => {
    const { outputs, message } = await hookEvents("head -c 1000000 /dev/zero | tr '\\0' y");
    const texts = outputs.map(({ event }) => event.message.text);
    expect(texts.length).toBeGreaterThanOrEqual(Math.ceil(1_000_000 / HOOK_OUTPUT_RECORD_CHARS));
    expect(texts.every((text) => text.length <= HOOK_OUTPUT_RECORD_CHARS)).toBe(true);
    expect(texts.join('')).toBe('y'.repeat(1_000_000));
    expect(message).toMatchObject({
      status: 'completed',
      output: `${'y'.repeat(4096)}\n[truncated ${1_000_000 - 4096} chars]`,
      outputTruncated: true,
    });
  });

  it('decodes invalid UTF-8 as U+FFFD and passes NUL as \\u0000 through a JSON line', async () => {
    const { outputs } = await hookEvents("printf 'a\\377\\376b\\0c\\n'");
    expect(outputs).toHaveLength(1);
    const line = JSON.stringify(outputs[0]?.event);
    expect(line).toContain('\\u0000');
    const parsed = parseRecordLine(line);
    expect(parsed).toEqual({
      type: 'hook_output',
      message: { hookName: 'after_run', slot: 0, seq: 0, text: 'a\ufffd\ufffdb\u0000c\n' },
    });
  });
});
