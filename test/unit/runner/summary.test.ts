import { describe, expect, it } from 'vitest';
import { hookEventNote, hookEventReason } from '../../../src/controller/events/records.js';
import {
  createLogFollowers,
  type PodLogState,
} from '../../../src/controller/issuerun/log-follower.js';
import { KubeApiError, type KubeClient } from '../../../src/controller/runtime/client.js';
import {
  TERMINATION_LIMIT_BYTES,
  encodeTerminationSummary,
  lastHookRecords,
  parseTerminationSummary,
  summarizeSlot,
  type TerminationSummary,
} from '../../../src/runner/summary.js';
import type { HookExecutionMessage, HookName } from '../../../src/workflow/events.js';

const record = (
  hookName: HookName,
  status: HookExecutionMessage['status'],
  extra: Partial<HookExecutionMessage> = {},
): HookExecutionMessage => ({ hookName, status, command: 'echo hi', cwd: '/w', ...extra });

const records: HookExecutionMessage[] = [
  record('after_create', 'started'),
  record('after_create', 'completed', { exitCode: 0, durationMs: 3, output: 'hi' }),
  record('before_run', 'started'),
  record('before_run', 'failed', {
    exitCode: null,
    durationMs: 5000,
    error: 'hook timed out after 5000ms: the output so far',
  }),
  record('after_run', 'started'),
  record('after_run', 'completed', { exitCode: 0, durationMs: 1 }),
];

const slotSummary = (): TerminationSummary =>
  summarizeSlot({
    slot: 0,
    summary: null,
    hooks: records,
    cancelled: false,
    failure: { code: 'hook_timed_out', message: 'before_run timed out' },
  });

describe('the termination summary trail', () => {
  it('carries every hook record in order, failures with the head of their error', () => {
    const parsed = parseTerminationSummary(encodeTerminationSummary(slotSummary()));
    expect(parsed?.records).toBe(6);
    expect(parsed?.trail).toEqual([
      { seq: 0, name: 'after_create', status: 'started', exitCode: null },
      { seq: 1, name: 'after_create', status: 'completed', exitCode: 0, durationMs: 3 },
      { seq: 2, name: 'before_run', status: 'started', exitCode: null },
      {
        seq: 3,
        name: 'before_run',
        status: 'failed',
        exitCode: null,
        durationMs: 5000,
        error: 'hook timed out after 5000ms',
      },
      { seq: 4, name: 'after_run', status: 'started', exitCode: null },
      { seq: 5, name: 'after_run', status: 'completed', exitCode: 0, durationMs: 1 },
    ]);
    expect(
      parsed && lastHookRecords(parsed).map((entry) => `${entry.name}:${entry.status}`),
    ).toEqual(['after_create:completed', 'before_run:failed', 'after_run:completed']);
  });

  it('stays within the kubelet limit, shortening the error and then dropping the trail', () => {
    const long = { ...slotSummary(), error: 'x'.repeat(10_000) };
    const text = encodeTerminationSummary(long);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(TERMINATION_LIMIT_BYTES);
    expect(parseTerminationSummary(text)?.trail).toHaveLength(6);
    const many = {
      ...slotSummary(),
      trail: Array.from({ length: 200 }, (_, seq) => ({
        seq,
        name: 'after_run' as const,
        status: 'completed' as const,
        exitCode: 0,
        durationMs: 123_456,
      })),
    };
    const cut = parseTerminationSummary(encodeTerminationSummary(many));
    expect(cut?.trail).toEqual([]);
    expect(cut?.records).toBe(6);
  });

  it('ignores a malformed trail instead of inventing records', () => {
    const text = JSON.stringify({ v: 1, succeeded: true, trail: [['after_run', 'exploded', 0]] });
    expect(parseTerminationSummary(text)?.trail).toEqual([]);
  });
});

/** A client whose every log read is answered with a 500, as when the kubelet lost the file. */
const refusingClient = {
  stream: () => Promise.reject(new KubeApiError(500, { message: 'no such file' }, 'GET', '/log')),
} as unknown as KubeClient;

describe('a Pod log that cannot be read', () => {
  it('gets the records it missed from the summary, each once, once the log counts as lost', async () => {
    const written: string[] = [];
    const followers = createLogFollowers({
      client: refusingClient,
      logLostAfterMs: 0,
      onHook: async (_state, hook) => {
        written.push(
          `${hook.seq} ${hookEventReason(hook.message)} ${hookEventNote(hook.message, 0, hook.recovered)}`,
        );
      },
      onProgress: () => {},
    });
    const target = {
      namespace: 'ns',
      podName: 'run-0-1',
      podUid: 'uid-1',
      runKey: 'ns/run',
      runUid: 'run-uid',
      slot: 0,
      attempt: 1,
    };
    const summary = parseTerminationSummary(encodeTerminationSummary(slotSummary()));
    let state: PodLogState = followers.ensure(target, false, summary);
    for (let reads = 0; !state.drained && reads < 20; reads += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      state.retryAt = 0;
      state = followers.ensure(target, false, summary);
    }
    await state.flushed;
    expect(state.drained).toBe(true);
    // A later look at the same ended Pod adds nothing.
    followers.ensure(target, false, summary);
    await followers.get('uid-1')?.flushed;
    expect(written).toEqual([
      "0 HookStarted after_create started in slot 0: recovered from the run Pod's termination message (its log could not be read); no output",
      "1 HookSucceeded after_create completed in slot 0 (exit 0, 3 ms): recovered from the run Pod's termination message (its log could not be read); no output",
      "2 HookStarted before_run started in slot 0: recovered from the run Pod's termination message (its log could not be read); no output",
      "3 HookTimedOut before_run failed in slot 0 (no exit code, 5000 ms): recovered from the run Pod's termination message (its log could not be read); no output",
      "4 HookStarted after_run started in slot 0: recovered from the run Pod's termination message (its log could not be read); no output",
      "5 HookSucceeded after_run completed in slot 0 (exit 0, 1 ms): recovered from the run Pod's termination message (its log could not be read); no output",
    ]);
    followers.stopAll();
  });
});
