import { describe, expect, it } from 'vitest';
import { createLogRenderer } from '../../../../src/cli/runs/render.js';
import { escapeText } from '../../../../src/cli/runs/escape.js';
import { humanDuration } from '../../../../src/cli/runs/duration.js';
import { formatTable } from '../../../../src/cli/runs/table.js';
import { formatRuns, mergeRows, type RunRow } from '../../../../src/cli/runs/get-runs.js';
import { eachCase, eachNamedCase } from '../../../support/cases.js';

const line = (record: object): string => JSON.stringify(record);
const render = (...lines: string[]): string => {
  const renderer = createLogRenderer();
  return lines.map((each) => renderer.line(each)).join('') + renderer.end();
};
const update = (value: object) =>
  line({ type: 'session_notification', message: { turn: 1, update: value }, slot: 0 });

describe('the log renderer', () => {
  eachNamedCase('renders %s', render, [
    [
      'a warm-up that prepared the tree',
      line({
        type: 'warm_up_completed',
        message: {
          outcome: 'prepared',
          digest: 'sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
          commit: 'c0ffee',
          files: 12,
          bytes: 900,
          prepareMs: 61500,
          digestMs: 4,
        },
      }),
      'warm-up prepared sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa at c0ffee: 12 files (61s)\n',
    ],
    [
      'a warm-up with nothing to do',
      line({ type: 'warm_up_completed', message: { outcome: 'unchanged', commit: 'c0ffee' } }),
      'warm-up: the default branch is still at c0ffee, nothing to prepare\n',
    ],
    [
      'a head check that found the branch moved on',
      line({ type: 'warm_up_completed', message: { outcome: 'moved', commit: 'f00d' } }),
      'warm-up: the default branch moved on to f00d, a full warm-up follows\n',
    ],
    [
      'a failed warm-up',
      line({
        type: 'warm_up_completed',
        message: { outcome: 'failed', errorCode: 'hook_failed', error: 'after_create exited 1' },
      }),
      'warm-up failed (hook_failed): after_create exited 1\n',
    ],
    [
      'a hook start',
      line({
        type: 'hook_execution',
        message: { status: 'started', hookName: 'before_run', command: 'npm ci', cwd: '/w' },
      }),
      '▶ hook before_run: npm ci\n',
    ],
    [
      'a hook finish with exit code and duration',
      line({
        type: 'hook_execution',
        message: {
          status: 'failed',
          hookName: 'before_run',
          command: 'x',
          cwd: '/w',
          exitCode: 3,
          durationMs: 1250,
          output: '',
        },
      }),
      '■ hook before_run failed: exit 3 in 1.3s\n',
    ],
    [
      'a killed hook',
      line({
        type: 'hook_execution',
        message: {
          status: 'failed',
          hookName: 'after_run',
          command: 'x',
          cwd: '/w',
          exitCode: null,
          durationMs: 40,
        },
      }),
      '■ hook after_run failed: killed in 40ms\n',
    ],
    [
      'hook output, as printed',
      line({
        type: 'hook_output',
        message: { hookName: 'before_run', slot: 0, seq: 0, text: 'added 3 packages\n' },
      }),
      'added 3 packages\n',
    ],
    [
      'an agent message',
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Done.' } }),
      'Done.\n',
    ],
    [
      'a thought',
      update({
        sessionUpdate: 'agent_thought_chunk',
        content: { type: 'text', text: 'look at x' },
      }),
      'thinking: look at x\n',
    ],
    [
      'a tool call',
      update({
        sessionUpdate: 'tool_call',
        toolCallId: 't1',
        title: 'Read file',
        kind: 'read',
        status: 'pending',
      }),
      '→ Read file (read)\n',
    ],
    [
      'a plan',
      update({
        sessionUpdate: 'plan',
        entries: [
          { content: 'write tests', priority: 'high', status: 'completed' },
          { content: 'fix', priority: 'high', status: 'pending' },
        ],
      }),
      'plan:\n  [x] write tests\n  [ ] fix\n',
    ],
    [
      'a finished turn with usage',
      line({
        type: 'turn_completed',
        message: {
          turn: 2,
          stopReason: 'end_turn',
          usage: { inputTokens: 10, outputTokens: 4, totalTokens: 14 },
        },
      }),
      'turn 2 completed (end_turn); tokens: 10 in, 4 out, 14 total\n',
    ],
    [
      'a turn start',
      line({ type: 'turn_started', message: { turn: 1, sessionId: 's' } }),
      '── turn 1 ──\n',
    ],
    [
      'a git step',
      line({
        type: 'git_workspace',
        message: {
          step: 'clone',
          status: 'completed',
          branch: 'b',
          detail: 'cloned x',
          durationMs: 2000,
          slot: 0,
        },
      }),
      '■ git clone completed: cloned x (2.0s)\n',
    ],
    [
      'the run summary',
      line({
        type: 'run_completed',
        message: {
          identifier: 'E-1',
          succeeded: false,
          slots: [
            { slot: 0, workspace: '/w', succeeded: false, errorCode: 'hook_failed', turns: 0 },
          ],
        },
      }),
      'run failed\n  slot 0: failed (hook_failed), 0 turns\n',
    ],
    ['a line that is not Lorenz JSON', 'plain text from a shell', 'plain text from a shell\n'],
    ['JSON of another shape', '{"level":30,"msg":"x"}', '{"level":30,"msg":"x"}\n'],
    ['a broken JSON line', '{"type":"hook_out', '{"type":"hook_out\n'],
  ]);

  it('shows a tool result under the tool title it belongs to', () => {
    expect(
      render(
        update({
          sessionUpdate: 'tool_call',
          toolCallId: 't1',
          title: 'Run tests',
          kind: 'execute',
        }),
        update({
          sessionUpdate: 'tool_call_update',
          toolCallId: 't1',
          status: 'completed',
          content: [{ type: 'content', content: { type: 'text', text: '3 passed' } }],
        }),
      ),
    ).toBe('→ Run tests (execute)\n← Run tests completed\n3 passed\n');
  });

  it('does not repeat hook output that was streamed, and shows it when it was not', () => {
    const started = line({
      type: 'hook_execution',
      message: { status: 'started', hookName: 'before_run', command: 'echo hi', cwd: '/' },
    });
    const finished = line({
      type: 'hook_execution',
      message: {
        status: 'completed',
        hookName: 'before_run',
        command: 'echo hi',
        cwd: '/',
        exitCode: 0,
        durationMs: 5,
        output: 'hi\n',
      },
    });
    const chunk = line({
      type: 'hook_output',
      message: { hookName: 'before_run', slot: 0, seq: 0, text: 'hi' },
    });
    expect(render(started, chunk, finished)).toBe(
      '▶ hook before_run: echo hi\nhi\n■ hook before_run completed: exit 0 in 5ms\n',
    );
    expect(render(started, finished)).toBe(
      '▶ hook before_run: echo hi\nhi\n■ hook before_run completed: exit 0 in 5ms\n',
    );
  });

  it('marks what the archive dropped', () => {
    const renderer = createLogRenderer();
    expect(renderer.elided(1048576)).toBe('… elided 1048576 bytes …\n');
  });

  it.each([
    ['an ANSI colour and a cursor move', 'red \u001b[31mX\u001b[2J', 'red \\x1b[31mX\\x1b[2J'],
    ['a carriage return that would overwrite the line', 'ok\rFAKE', 'ok\\rFAKE'],
    ['a NUL, a bell and a backspace', 'a\u0000b\u0007c\bd', 'a\\x00b\\x07c\\bd'],
    ['an OSC title sequence', '\u001b]0;owned\u0007', '\\x1b]0;owned\\x07'],
    ['a C1 CSI and DEL', 'x\u009b31m\u007f', 'x\\x9b31m\\x7f'],
    ['a bidi override', 'abc\u202edef', 'abc\\u202edef'],
  ])('escapes %s in every kind of text', (_name, hostile, shown) => {
    const records = [
      hostile,
      line({
        type: 'hook_output',
        message: { hookName: 'before_run', slot: 0, seq: 0, text: `${hostile}\n` },
      }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: hostile } }),
      update({ sessionUpdate: 'tool_call', toolCallId: 't', title: hostile, kind: 'read' }),
    ];
    for (const record of records) {
      const text = render(record);
      expect(text).toContain(shown);
      // eslint-disable-next-line no-control-regex
      expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    }
  });

  it('renders a 1 MB line whole, in bounded time', () => {
    const text = 'x'.repeat(1024 * 1024);
    const start = performance.now();
    const out = render(
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }),
    );
    expect(out.length).toBe(text.length + 1);
    expect(render(`${text}\u001b`)).toBe(`${text}\\x1b\n`);
    expect(performance.now() - start).toBeLessThan(2000);
  });

  it('escapes nothing that is plain text, tabs and newlines included', () => {
    expect(escapeText('a\tb\nc — ü')).toBe('a\tb\nc — ü');
  });
});

describe('the tables', () => {
  it('prints like kubectl get: headers, three spaces, <none> for empty cells, no trailing space', () => {
    expect(
      formatTable(
        ['NAME', 'PHASE', 'REASON'],
        [
          ['a', 'Running', ''],
          ['longer-name', 'Failed', 'HookFailed'],
        ],
      ),
    ).toBe(
      'NAME          PHASE     REASON\n' +
        'a             Running   <none>\n' +
        'longer-name   Failed    HookFailed\n',
    );
  });

  it('escapes hostile cells (a newline cannot forge a row)', () => {
    const text = formatTable(['NAME'], [['a\nb\u001b[2J']]);
    expect(text).toBe('NAME\na\\nb\\x1b[2J\n');
  });

  eachCase('prints %d ms as kubectl does: %s', humanDuration, [
    [5_000, '5s'],
    [119_000, '119s'],
    [192_000, '3m12s'],
    [30 * 60_000, '30m'],
    [(4 * 60 + 5) * 60_000, '4h5m'],
    [30 * 3_600_000, '30h'],
    [(3 * 24 + 4) * 3_600_000, '3d4h'],
    [400 * 86_400_000, '400d'],
  ]);

  const row = (over: Partial<RunRow>): RunRow => ({
    source: 'live',
    namespace: 'a',
    name: 'run',
    uid: 'u1',
    workflow: 'wf',
    issue: 'ENG-1',
    phase: 'Running',
    reason: '',
    attempt: 1,
    createdAt: '2026-01-01T00:00:00Z',
    startedAt: '2026-01-01T00:00:00Z',
    ...over,
  });

  it('merges live and archived rows: the live one wins for its uid', () => {
    const rows = mergeRows(
      [row({ uid: 'u1', phase: 'Running' })],
      [
        row({ uid: 'u1', source: 'archived', phase: 'Succeeded' }),
        row({
          uid: 'u0',
          name: 'old',
          source: 'archived',
          phase: 'Failed',
          reason: 'HookFailed',
          duration: '3s',
        }),
      ],
    );
    const now = Date.parse('2026-01-01T00:05:00Z');
    expect(formatRuns(rows, { allNamespaces: true, output: 'table', now })).toBe(
      'NAMESPACE   NAME   WORKFLOW   ISSUE   PHASE     REASON       ATTEMPT   STARTED   DURATION   SOURCE\n' +
        'a           old    wf         ENG-1   Failed    HookFailed   1         5m        3s         Archived\n' +
        'a           run    wf         ENG-1   Running   <none>       1         5m        <none>     Live\n',
    );
    expect(formatRuns(rows, { allNamespaces: false, output: 'table', now }).split('\n')[0]).toMatch(
      /^NAME /,
    );
    expect(
      JSON.parse(formatRuns(rows, { allNamespaces: false, output: 'json' })).items,
    ).toHaveLength(2);
  });
});
