import { describe, expect, it } from 'vitest';
import { createTranscriptBuilder, transcriptOf } from '../../../src/server/transcript.js';

// Records as the runner writes them (docs/run-log.md), one JSON line each, with `at`.
const line = (type: string, message: unknown, at: string, slot = 0): string =>
  JSON.stringify({ type, message, slot, at });
const T = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

describe('transcript of a runner log', () => {
  const cases: { name: string; lines: string[]; entries: unknown[] }[] = [
    {
      name: 'coalesced message and thought chunks',
      lines: [
        line(
          'session_notification',
          {
            turn: 1,
            update: {
              sessionUpdate: 'agent_thought_chunk',
              content: { type: 'text', text: 'hmm' },
            },
          },
          T(1),
        ),
        line(
          'session_notification',
          {
            turn: 1,
            update: {
              sessionUpdate: 'agent_message_chunk',
              content: { type: 'text', text: '<script>x</script>' },
            },
          },
          T(2),
        ),
      ],
      entries: [
        { seq: 0, kind: 'thought', text: 'hmm', at: T(1) },
        { seq: 1, kind: 'message', text: '<script>x</script>', at: T(2) },
      ],
    },
    {
      name: 'a tool call and its result',
      lines: [
        line(
          'session_notification',
          {
            turn: 1,
            update: {
              sessionUpdate: 'tool_call',
              toolCallId: 'c1',
              title: 'Run ls',
              kind: 'execute',
              status: 'pending',
              rawInput: { command: 'ls' },
            },
          },
          T(1),
        ),
        line(
          'session_notification',
          {
            turn: 1,
            update: {
              sessionUpdate: 'tool_call_update',
              toolCallId: 'c1',
              status: 'completed',
              content: [{ type: 'content', content: { type: 'text', text: 'a\nb' } }],
            },
          },
          T(3),
        ),
      ],
      entries: [
        {
          kind: 'tool_call',
          toolCallId: 'c1',
          title: 'Run ls',
          toolKind: 'execute',
          status: 'pending',
          input: '{"command":"ls"}',
        },
        { kind: 'tool_result', toolCallId: 'c1', status: 'completed', text: 'a\nb' },
      ],
    },
    {
      name: 'a hook run with streamed output',
      lines: [
        line(
          'hook_execution',
          { status: 'started', hookName: 'before_run', command: 'make', cwd: '/w', slot: 0 },
          T(1),
        ),
        line('hook_output', { hookName: 'before_run', slot: 0, seq: 0, text: 'one\n' }, T(2)),
        line(
          'hook_output',
          { hookName: 'before_run', slot: 0, seq: 0, text: '\u001b[31mtwo\n' },
          T(3),
        ),
        line(
          'hook_execution',
          {
            status: 'failed',
            hookName: 'before_run',
            command: 'make',
            cwd: '/w',
            slot: 0,
            exitCode: 2,
            durationMs: 2000,
          },
          T(3),
        ),
      ],
      entries: [
        { kind: 'hook', hookName: 'before_run', status: 'started', hookSeq: 0 },
        { kind: 'hook_output', hookName: 'before_run', hookSeq: 0, text: 'one\n' },
        { kind: 'hook_output', hookName: 'before_run', hookSeq: 0, text: '\u001b[31mtwo\n' },
        { kind: 'hook', hookName: 'before_run', status: 'failed', hookSeq: 0, exitCode: 2 },
      ],
    },
    {
      name: 'turns, plan, git step and stderr',
      lines: [
        line(
          'git_workspace',
          {
            step: 'clone',
            status: 'completed',
            branch: 'b',
            detail: 'ok',
            durationMs: 1000,
            slot: 0,
          },
          T(2),
        ),
        line('turn_started', { turn: 1, sessionId: 's' }, T(3)),
        line(
          'session_notification',
          {
            turn: 1,
            update: {
              sessionUpdate: 'plan',
              entries: [{ content: 'do it', status: 'pending', priority: 'high' }],
            },
          },
          T(4),
        ),
        line('stderr', 'warning: x', T(5)),
        line('turn_completed', { turn: 1, stopReason: 'end_turn' }, T(6)),
      ],
      entries: [
        { kind: 'git', step: 'clone', status: 'completed', detail: 'ok' },
        { kind: 'turn', turn: 1, status: 'started' },
        { kind: 'plan', entries: [{ content: 'do it', status: 'pending', priority: 'high' }] },
        { kind: 'stderr', text: 'warning: x' },
        { kind: 'turn', turn: 1, status: 'completed', detail: 'end_turn' },
      ],
    },
    {
      name: 'lines that are not records, and records the view does not show',
      lines: [
        'not json',
        '{"no":"type"}',
        line('session_started', { sessionId: 's' }, T(1)),
        line('session_notification', { turn: 0, update: { sessionUpdate: 'usage_update' } }, T(1)),
      ],
      entries: [],
    },
  ];
  it.each(cases)('$name', ({ lines, entries }) => {
    const { entries: got } = transcriptOf(lines, { slot: 0, attempt: 1 });
    expect(got).toHaveLength(entries.length);
    got.forEach((entry, index) => {
      expect(entry).toMatchObject({ slot: 0, attempt: 1, ...(entries[index] as object) });
    });
  });

  it('draws bars for git steps, hooks, turns and tool calls; a running one has no end', () => {
    const { timeline } = transcriptOf(
      [
        line('git_workspace', { step: 'clone', status: 'completed', durationMs: 1000 }, T(2)),
        line('hook_execution', { status: 'started', hookName: 'after_create' }, T(2)),
        line(
          'hook_execution',
          { status: 'completed', hookName: 'after_create', exitCode: 0 },
          T(3),
        ),
        line('turn_started', { turn: 1 }, T(4)),
        line(
          'session_notification',
          { turn: 1, update: { sessionUpdate: 'tool_call', toolCallId: 't', title: 'Read' } },
          T(5),
        ),
        line(
          'session_notification',
          {
            turn: 1,
            update: { sessionUpdate: 'tool_call_update', toolCallId: 't', status: 'failed' },
          },
          T(6),
        ),
      ],
      { slot: 1, attempt: 2 },
    );
    expect(timeline).toEqual([
      {
        kind: 'git',
        slot: 1,
        attempt: 2,
        label: 'git clone',
        startedAt: T(1),
        finishedAt: T(2),
        status: 'succeeded',
      },
      {
        kind: 'hook',
        slot: 1,
        attempt: 2,
        label: 'after_create',
        startedAt: T(2),
        finishedAt: T(3),
        status: 'succeeded',
      },
      { kind: 'turn', slot: 1, attempt: 2, label: 'turn 1', startedAt: T(4), status: 'running' },
      {
        kind: 'tool_call',
        slot: 1,
        attempt: 2,
        label: 'Read',
        startedAt: T(5),
        finishedAt: T(6),
        status: 'failed',
      },
    ]);
  });

  it('keeps a hook run whole output, and numbers entries across builders sharing a counter', () => {
    const counter = { next: 0 };
    const first = createTranscriptBuilder({ slot: 0, attempt: 1, counter, keepHookOutput: true });
    first.push(line('hook_execution', { status: 'started', hookName: 'before_run' }, T(1)));
    first.push(line('hook_output', { hookName: 'before_run', seq: 0, text: 'a\n' }, T(1)));
    first.push(line('hook_output', { hookName: 'before_run', seq: 0, text: 'b' }, T(1)));
    expect(first.hookOutput(0)).toBe('a\nb');
    expect(first.hookOutput(1)).toBeUndefined();
    const second = createTranscriptBuilder({ slot: 0, attempt: 2, counter });
    expect(second.elided(512)).toEqual({ seq: 3, slot: 0, attempt: 2, kind: 'elided', bytes: 512 });
  });
});
