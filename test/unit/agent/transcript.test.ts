// The agent's transcript in the run log: every kind of ACP session update the scripted agent
// sends reaches the log as a session_notification record, whole, and one over 1 MiB is cut.
import { describe, expect, it } from 'vitest';
import { boundText, boundValue, MAX_UPDATE_CHARS } from '../../../src/agent/bounded.js';
import { createAcpAgentStep } from '../../../src/agent/step.js';
import { createLocalExecutor } from '../../../src/executor/local.js';
import {
  agentConfig,
  stepContext,
  scriptedAgentCommandPerSuite,
} from '../../fixtures/scripted-agent/harness.js';

describe('boundValue', () => {
  it.each<[string, unknown, number, (value: unknown) => void]>([
    [
      'a value that fits is kept as it is',
      { a: 'xyz' },
      1000,
      (value) => expect(value).toEqual({ a: 'xyz' }),
    ],
    [
      'the long string is cut, the short ones kept',
      { short: 'abc', long: 'y'.repeat(5000) },
      1000,
      (value) => {
        const cut = value as { short: string; long: string };
        expect(cut.short).toBe('abc');
        expect(cut.long).toMatch(/^y+\n\[truncated \d+ chars\]$/);
      },
    ],
    [
      'strings inside arrays are cut too',
      [{ text: 'z'.repeat(3000) }, { text: 'z'.repeat(3000) }],
      1000,
      (value) => expect(JSON.stringify(value)).toMatch(/\[truncated \d+ chars\]/),
    ],
    [
      'what cannot fit is null',
      Array.from({ length: 1000 }, (_, index) => index),
      300,
      (value) => expect(value).toBeNull(),
    ],
  ])('%s', (_case, input, limit, check) => {
    const bounded = boundValue(input, limit);
    check(bounded.value);
    expect(JSON.stringify(bounded.value).length).toBeLessThanOrEqual(limit);
    expect(bounded.truncated > 0).toBe(JSON.stringify(input).length > limit);
  });

  it('cuts a text with its marker and never inside a surrogate pair', () => {
    expect(boundText('ab😀cd', 3)).toBe('ab\n[truncated 4 chars]');
    expect(boundText('short', 10)).toBe('short');
  });
});

const agentCommand = scriptedAgentCommandPerSuite();

describe('the agent transcript in the log', () => {
  it('carries thoughts, messages, plans, tool calls with their results and usage; a huge result is cut', async () => {
    const harness = await stepContext();
    const step = createAcpAgentStep({
      config: agentConfig(agentCommand()),
      renderPrompt: () =>
        [
          'Work.',
          '@think pondering the fix',
          '@say on it',
          '@plan read "fix it"',
          '@shell echo from-shell',
          '@usage 3 4',
          "@shell head -c 2000000 /dev/zero | tr '\\0' z",
        ].join('\n'),
      isIssueActive: async () => true,
      executor: createLocalExecutor(),
    });
    const result = await step(harness.context);
    expect(result).toMatchObject({ ok: true, turns: 1 });
    const messages = harness.messages('session_notification');
    const updates = messages.map(
      (message) => message.update as { sessionUpdate: string } & Record<string, unknown>,
    );
    expect(updates.map((update) => update.sessionUpdate)).toEqual([
      'agent_thought_chunk',
      'agent_message_chunk',
      'plan',
      'tool_call',
      'tool_call_update',
      'usage_update',
      'tool_call',
      'tool_call_update',
    ]);
    expect(updates[0]).toEqual({
      sessionUpdate: 'agent_thought_chunk',
      content: { type: 'text', text: 'pondering the fix' },
    });
    expect(updates[2]).toMatchObject({
      entries: [
        { content: 'read', status: 'in_progress' },
        { content: 'fix it', status: 'pending' },
      ],
    });
    expect(JSON.stringify(updates[4])).toContain('from-shell');
    expect(updates[5]).toMatchObject({ used: 7, size: 200_000 });
    expect(messages[4]?.truncated).toBeUndefined();
    // The 2 MB result: cut to 1 MiB with a marker, the count of what went on the message.
    const huge = messages[7];
    expect(JSON.stringify(huge).length).toBeLessThanOrEqual(MAX_UPDATE_CHARS);
    expect(huge?.truncated).toBeGreaterThan(900_000);
    expect(JSON.stringify(huge)).toMatch(/"zzzz[z]+\\n\[truncated \d+ chars\]"/);
    expect(harness.messages('turn_completed')[0]).toMatchObject({
      usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 },
    });
  }, 60_000);
});
