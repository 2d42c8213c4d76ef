import { describe, expect, it } from 'vitest';
import {
  createRecordParser,
  hookEventNote,
  hookEventReason,
  hookStatusEntry,
  mergeHookEntries,
  type HookRecord,
} from '../../src/controller/events/records.js';
import type { HookExecutionMessage, LorenzEvent } from '../../src/workflow/events.js';

const started: HookExecutionMessage = {
  status: 'started',
  hookName: 'after_create',
  command: 'git clone x .',
  cwd: '/w',
};
const completed: HookExecutionMessage = {
  ...started,
  status: 'completed',
  exitCode: 0,
  output: 'ok',
  outputTruncated: false,
  error: null,
  errorTruncated: false,
  durationMs: 12,
};
const line = (event: LorenzEvent) => `${JSON.stringify(event)}\n`;

describe('runner record stream', () => {
  it('splits chunks into lines, skips noise, and numbers hook records', () => {
    const hooks: HookRecord[] = [];
    const all: string[] = [];
    const parser = createRecordParser({
      onHook: (hook) => hooks.push(hook),
      onRecord: (record) => all.push(record.type),
    });
    const text = `noise\n${line({ type: 'hook_execution', message: started })}{"broken"\n${line({ type: 'stderr', message: 'x' })}${line({ type: 'hook_execution', message: completed })}`;
    for (let at = 0; at < text.length; at += 7) parser.push(text.slice(at, at + 7));
    parser.end();
    expect(all).toEqual(['hook_execution', 'stderr', 'hook_execution']);
    expect(hooks.map((hook) => [hook.seq, hook.message.status])).toEqual([
      [0, 'started'],
      [1, 'completed'],
    ]);
    expect(parser.hookCount).toBe(2);
  });

  it('keeps one status entry per slot and hook, the latest winning, in lifecycle order', () => {
    const merged = mergeHookEntries(
      [hookStatusEntry({ ...started, hookName: 'before_run' }, 0), hookStatusEntry(started, 0)],
      [hookStatusEntry(completed, 0), hookStatusEntry(started, 1)],
    );
    expect(merged.map((entry) => `${entry.slot}/${entry.name}/${entry.status}`)).toEqual([
      '0/after_create/completed',
      '0/before_run/started',
      '1/after_create/started',
    ]);
    expect(merged[0]).toMatchObject({ exitCode: 0, output: 'ok', durationMs: 12 });
  });

  it.each<[string, HookExecutionMessage, string]>([
    ['started', started, 'HookStarted'],
    ['completed', completed, 'HookSucceeded'],
    [
      'failed',
      { ...completed, status: 'failed', exitCode: 1, error: 'hook failed with status 1: x' },
      'HookFailed',
    ],
    [
      'timed out',
      { ...completed, status: 'failed', exitCode: null, error: 'hook timed out after 50ms' },
      'HookTimedOut',
    ],
  ])('maps a %s record to its Event reason', (_case, message, reason) => {
    expect(hookEventReason(message)).toBe(reason);
  });

  it('writes notes of at most 1 KiB', () => {
    const big = { ...completed, output: 'é'.repeat(5000) };
    const note = hookEventNote(big, 0);
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(1024);
    expect(note.startsWith('after_create completed in slot 0 (exit 0, 12 ms): éé')).toBe(true);
    expect(hookEventNote(started, 0)).toBe('after_create started in slot 0: git clone x .');
  });
});
