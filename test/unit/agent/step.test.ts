import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAcpAgentStep } from '../../../src/agent/step.js';
import { createLocalExecutor } from '../../../src/executor/local.js';
import {
  agentConfig,
  bridgePid,
  isAlive,
  liveGroupMembers,
  stepContext,
  type StepHarness,
  runAgentStep,
  type AgentStepRun,
  scriptedAgentCommandPerSuite,
} from '../../fixtures/scripted-agent/harness.js';

// Every case runs the real scripted ACP agent as a `bash -lc` bridge over real stdio.
const agentCommand = scriptedAgentCommandPerSuite();
const executor = createLocalExecutor();

/** A step of the scripted agent started with `flags`, or of another bridge `command`. */
async function run({
  flags,
  command,
  ...options
}: AgentStepRun & { flags?: string; command?: string }) {
  return runAgentStep(command ?? `${agentCommand()} ${flags ?? ''}`, {
    executor,
    controllerOnlyEnv: [],
    ...options,
  });
}

/** After every step, nothing of the bridge may be left. */
async function expectNoBridgeLeft(harness: StepHarness): Promise<void> {
  expect(await liveGroupMembers(bridgePid(harness))).toEqual([]);
}

/** The processes whose pids the agent wrote to `pidFile` are gone, and so is the bridge. */
async function expectKilled(harness: StepHarness, pidFile: string): Promise<number[]> {
  const pids = (await readFile(pidFile, 'utf8')).trim().split('\n').map(Number);
  for (const pid of pids) expect(await isAlive(pid)).toBe(false);
  await expectNoBridgeLeft(harness);
  return pids;
}

describe('agent step against the scripted ACP agent', () => {
  it('runs one turn: files written, updates coalesced, session and process events', async () => {
    const { result, harness, read } = await run({
      prompt:
        'Fix it.\n@write notes.txt "hello\\nworld"\n@say one two three\n@shell echo from-shell',
    });
    expect(result).toEqual({ ok: true, turns: 1 });
    expect(await read('notes.txt')).toBe('hello\nworld');
    const types = harness.events.map((event) => event.type);
    expect(types[0]).toBe('session_started');
    expect(types.filter((type) => type === 'turn_started')).toHaveLength(1);
    expect(types.at(-1)).toBe('process_exit');
    const updates = harness
      .messages('session_notification')
      .map((message) => message.update as { sessionUpdate: string; content?: { text: string } });
    // Five message chunks (the write report, three words, a newline) arrive back to back
    // before the tool call: one event carries them all.
    expect(updates[0]).toEqual({
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: 'wrote notes.txt (11 chars)\none two three\n' },
    });
    expect(updates[1]?.sessionUpdate).toBe('tool_call');
    const toolUpdate = harness
      .messages('session_notification')
      .map((message) => message.update as Record<string, unknown>)
      .find((update) => update.sessionUpdate === 'tool_call_update');
    expect(JSON.stringify(toolUpdate)).toContain('from-shell');
    expect(harness.messages('session_started')[0]).toMatchObject({
      command: expect.stringContaining('scripted-agent'),
      agent: { name: 'scripted-agent' },
    });
    await expectNoBridgeLeft(harness);
  });

  it('continues with the continuation prompt while the issue is active, and stops when it is not', async () => {
    const harness = await stepContext();
    const log = join(harness.context.workspace, 'prompts.jsonl');
    const state = join(harness.context.workspace, 'state');
    await writeFile(state, 'In Progress');
    const step = createAcpAgentStep({
      config: agentConfig(`${agentCommand()} --prompt-log ${log}`, { maxTurns: 10 }),
      renderPrompt: () => 'Work.\n@turn 3: @write state Done',
      isIssueActive: async () => (await readFile(state, 'utf8')) !== 'Done',
      executor,
    });
    const result = await step(harness.context);
    expect(result).toEqual({ ok: true, turns: 3 });
    const prompts = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { turn: number; text: string });
    expect(prompts.map((prompt) => prompt.turn)).toEqual([1, 2, 3]);
    expect(prompts[0]?.text).toContain('Work.');
    expect(prompts[1]?.text).toMatch(/^Continuation guidance:/);
    expect(prompts[1]?.text).toContain('This is continuation turn #2 of 10');
    expect(prompts[2]?.text).toContain('This is continuation turn #3 of 10');
    // One session for all turns.
    expect(harness.messages('session_started')).toHaveLength(1);
    expect(new Set(harness.messages('turn_started').map((m) => m.sessionId)).size).toBe(1);
    await expectNoBridgeLeft(harness);
  });

  it('stops at agent.max_turns while the issue stays active', async () => {
    let asked = 0;
    const { result, harness } = await run({
      prompt: 'Keep going.',
      config: { maxTurns: 3 },
      isIssueActive: async () => {
        asked += 1;
        return true;
      },
    });
    expect(result).toEqual({ ok: true, turns: 3 });
    expect(asked).toBe(2);
    expect(harness.messages('turn_completed').map((m) => m.turn)).toEqual([1, 2, 3]);
  });

  it.each([
    { stop: 'max_tokens', expected: { ok: true, turns: 1 } },
    { stop: 'max_turn_requests', expected: { ok: true, turns: 1 } },
    {
      stop: 'refusal',
      expected: {
        ok: false,
        code: 'acp_turn_failed',
        message: 'acp_turn_failed: refusal',
        turns: 1,
      },
    },
    {
      stop: 'cancelled',
      expected: { ok: false, code: 'turn_cancelled', turns: 1 },
      event: 'turn_cancelled',
    },
  ])('maps stop reason $stop', async ({ stop, expected, event }) => {
    const { result, harness } = await run({ prompt: `@stop ${stop}`, config: { maxTurns: 1 } });
    expect(result).toMatchObject(expected);
    if (event) expect(harness.messages(event)).toHaveLength(1);
    if (!expected.ok && !event) {
      expect(harness.messages('turn_failed')[0]).toMatchObject({ turn: 1, code: expected.code });
    }
  });

  it('auto-approves a permission request that offers an allow option', async () => {
    const { result, harness, read } = await run({
      prompt: '@permission\n@write granted.txt yes',
    });
    expect(result).toEqual({ ok: true, turns: 1 });
    expect(await read('granted.txt')).toBe('yes');
    expect(harness.messages('approval_auto_approved')).toEqual([
      { turn: 1, toolCall: 'scripted risky action', optionId: 'allow', kind: 'allow_once' },
    ]);
  });

  it('fails the turn with approval_required when no allow option is offered', async () => {
    const { result, harness, read } = await run({
      prompt: '@permission reject\n@write denied.txt no',
    });
    expect(result).toMatchObject({ ok: false, code: 'approval_required', turns: 1 });
    expect(harness.messages('approval_required')[0]).toMatchObject({
      turn: 1,
      options: ['reject_once', 'reject_always'],
    });
    await expect(read('denied.txt')).rejects.toThrow();
    await expectNoBridgeLeft(harness);
  });

  it('fails the turn with turn_input_required when the agent asks for user input', async () => {
    const { result, harness } = await run({ prompt: '@ask Which database?' });
    expect(result).toMatchObject({ ok: false, code: 'turn_input_required', turns: 1 });
    expect(harness.messages('turn_input_required')).toEqual([
      { turn: 1, message: 'Which database?' },
    ]);
    await expectNoBridgeLeft(harness);
  });

  it('cancels a turn that runs past turn_timeout_ms', async () => {
    const { result, elapsedMs, harness } = await run({
      prompt: '@sleep 20000',
      config: { turnTimeoutMs: 400 },
    });
    expect(result).toMatchObject({
      ok: false,
      code: 'turn_timeout',
      message: 'turn 1 timed out after 400 ms',
    });
    expect(elapsedMs).toBeLessThan(5000);
    await expectNoBridgeLeft(harness);
  });

  it('kills a bridge that ignores session/cancel after a timeout, its children included', async () => {
    const harness = await stepContext();
    const pidFile = join(harness.context.workspace, 'pids');
    const step = createAcpAgentStep({
      config: agentConfig(`${agentCommand()} --pid-file ${pidFile}`, { turnTimeoutMs: 400 }),
      renderPrompt: () => '@hang',
      isIssueActive: async () => true,
      executor,
      cancelGraceMs: 200,
      killGraceMs: 500,
    });
    const started = performance.now();
    const result = await step(harness.context);
    expect(result).toMatchObject({ ok: false, code: 'turn_timeout' });
    expect(performance.now() - started).toBeLessThan(6000);
    expect(await expectKilled(harness, pidFile)).toHaveLength(2);
  });

  it('cancels a silent turn after stall_timeout_ms', async () => {
    const { result, elapsedMs } = await run({
      prompt: '@silent 20000',
      config: { stallTimeoutMs: 400 },
    });
    expect(result).toMatchObject({ ok: false, code: 'turn_stalled' });
    expect(result.ok ? '' : result.message).toContain('400 ms');
    expect(elapsedMs).toBeLessThan(5000);
  });

  it('counts updates and stderr output as activity for the stall timer', async () => {
    const { result } = await run({
      prompt: [
        '@silent 400',
        '@stderr still here',
        '@silent 400',
        '@say still working',
        '@silent 400',
      ].join('\n'),
      config: { stallTimeoutMs: 900 },
    });
    expect(result).toEqual({ ok: true, turns: 1 });
  });

  it('reports a bridge that exits mid-turn, with its status and last stderr lines', async () => {
    const { result, harness } = await run({ prompt: '@stderr about to go\n@exit 3' });
    expect(result).toMatchObject({ ok: false, code: 'agent_bridge_exited', turns: 1 });
    const message = result.ok ? '' : result.message;
    expect(message).toContain('scripted-agent');
    expect(message).toContain('exited with status 3 during turn 1');
    expect(message).toContain('about to go');
    expect(harness.messages('stderr').map((m) => m.text)).toContain('about to go');
    expect(harness.messages('process_exit')[0]).toMatchObject({ exitCode: 3 });
  });

  it.each([
    {
      name: 'reports a bridge that dies before initialize with what it printed on stderr',
      start: { command: 'echo "bridge: missing config file" >&2; exit 2' },
      code: 'agent_bridge_exited',
      message: /exited with status 2 before answering initialize; stderr: .*missing config file/,
    },
    {
      name: 'quotes a refusal of session/new',
      start: { flags: '--refuse "Authentication required"' },
      code: 'agent_protocol_error',
      message: /^agent bridge .*scripted-agent.* refused session\/new: "Authentication required"$/,
    },
  ])('$name', async ({ start, code, message }) => {
    const { result } = await run({ prompt: 'anything', ...start });
    expect(result).toMatchObject({ ok: false, code, turns: 0 });
    expect(result.ok ? '' : result.message).toMatch(message);
  });

  it('names a bridge command that is not installed', async () => {
    const { result, elapsedMs } = await run({
      prompt: 'anything',
      command: 'lorenz-no-such-acp-bridge --stdio',
    });
    expect(result).toMatchObject({ ok: false, code: 'agent_bridge_missing', turns: 0 });
    expect(result.ok ? '' : result.message).toContain(
      'agent bridge command not found: lorenz-no-such-acp-bridge --stdio',
    );
    expect(elapsedMs).toBeLessThan(5000);
  });

  it('reports malformed stdout lines and goes on', async () => {
    const { result, harness, read } = await run({
      prompt: '@malformed not json at all\n@write after.txt ok',
    });
    expect(result).toEqual({ ok: true, turns: 1 });
    expect(await read('after.txt')).toBe('ok');
    expect(harness.messages('malformed')).toEqual([{ line: 'not json at all' }]);
  });

  // The wait for initialize includes the bridge's start-up (Node on a busy 2-core machine).
  it.each([
    { method: 'initialize', timeoutMs: 3000 },
    { method: 'session/new', timeoutMs: 4000 },
  ])(
    'ends a bridge that never answers $method after response_timeout_ms, killing its process tree',
    async ({ method, timeoutMs }) => {
      const harness = await stepContext();
      const pidFile = join(harness.context.workspace, 'pids');
      const step = createAcpAgentStep({
        config: agentConfig(`${agentCommand()} --hang ${method} --pid-file ${pidFile}`, {
          responseTimeoutMs: timeoutMs,
        }),
        renderPrompt: () => 'anything',
        isIssueActive: async () => true,
        executor,
        killGraceMs: 500,
      });
      const result = await step(harness.context);
      expect(result).toMatchObject({ ok: false, code: 'agent_response_timeout', turns: 0 });
      expect(result.ok ? '' : result.message).toMatch(
        new RegExp(`^agent bridge .* did not answer ${method} within ${timeoutMs} ms$`),
      );
      await expectKilled(harness, pidFile);
    },
  );

  it('reports token usage cumulatively across turns', async () => {
    const { result, harness } = await run({
      prompt: '@usage 10 5\n@turn 2: @usage 7 3',
      config: { maxTurns: 2 },
    });
    expect(result).toEqual({
      ok: true,
      turns: 2,
      usage: { inputTokens: 17, outputTokens: 8, totalTokens: 25 },
    });
    expect(harness.messages('turn_completed').map((m) => m.usage)).toEqual([
      { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      { inputTokens: 17, outputTokens: 8, totalTokens: 25 },
    ]);
  });

  it('keeps tracker credentials and controller-only variables out of the agent', async () => {
    const { result, read } = await run({
      prompt: '@shell env > env.txt',
      env: {
        PATH: process.env.PATH,
        LINEAR_API_KEY: 'lin-secret',
        GITHUB_TOKEN: 'gh-secret',
        MY_TRACKER_KEY: 'tracker-secret',
        CONTROLLER_ONLY: 'ctl-secret',
        KEEP_ME: 'visible',
      },
      controllerOnlyEnv: ['CONTROLLER_ONLY'],
      config: { apiKey: 'tracker-secret', env: { BRIDGE_VAR: 'from-bridge' } },
    });
    expect(result).toEqual({ ok: true, turns: 1 });
    const env = await read('env.txt');
    expect(env).toContain('KEEP_ME=visible');
    expect(env).toContain('BRIDGE_VAR=from-bridge');
    for (const secret of ['lin-secret', 'gh-secret', 'tracker-secret', 'ctl-secret']) {
      expect(env).not.toContain(secret);
    }
  });

  it('stops promptly when the caller aborts mid-turn', async () => {
    const { result, elapsedMs, harness } = await run({
      prompt: '@sleep 20000',
      during: (started) => {
        const poll = setInterval(() => {
          if (started.messages('turn_started').length === 0) return;
          clearInterval(poll);
          setTimeout(() => started.abort.abort(), 200);
        }, 20);
      },
    });
    expect(result).toMatchObject({ ok: false, code: 'turn_cancelled', turns: 1 });
    expect(harness.messages('turn_cancelled')).toHaveLength(1);
    expect(elapsedMs).toBeLessThan(5000);
    await expectNoBridgeLeft(harness);
  });

  it('fails when the issue state cannot be read before a continuation turn', async () => {
    const { result } = await run({
      prompt: 'go',
      config: { maxTurns: 5 },
      isIssueActive: async () => {
        throw new Error('issue file unreadable');
      },
    });
    expect(result).toMatchObject({ ok: false, code: 'issue_state_unavailable', turns: 1 });
    expect(result.ok ? '' : result.message).toContain('issue file unreadable');
  });
});
