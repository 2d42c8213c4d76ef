import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAcpAgentStep } from '../../../src/agent/step.js';
import { createLocalExecutor } from '../../../src/executor/local.js';
import {
  agentConfig,
  bridgePid,
  credentialFreeEnv,
  liveGroupMembers,
  stepContext,
} from '../../fixtures/scripted-agent/harness.js';

// The real ACP bridges from the npm registry, run without any credentials: they answer
// initialize, then refuse to work. The step must end promptly, say which bridge refused
// and why, and leave nothing running. bash -lc may reset PATH: the commands are absolute.
const bin = (name: string): string => resolve('node_modules/.bin', name);

describe.each([
  {
    bridge: 'codex-acp',
    code: 'agent_protocol_error',
    message: /^agent bridge .*codex-acp refused session\/new: "Authentication required"$/,
    turns: 0,
  },
  {
    bridge: 'claude-agent-acp',
    code: 'acp_turn_failed',
    message:
      /^acp_turn_failed: agent bridge .*claude-agent-acp answered session\/prompt with an error: "Authentication required"$/,
    turns: 1,
  },
])('the real $bridge bridge without credentials', ({ bridge, code, message, turns }) => {
  it('fails promptly, quoting the bridge, and leaves no process behind', async () => {
    const harness = await stepContext();
    const home = await mkdtemp(join(tmpdir(), 'agent-home-'));
    const step = createAcpAgentStep({
      config: agentConfig(`${process.execPath} ${bin(bridge)}`, { responseTimeoutMs: 20_000 }),
      renderPrompt: () => 'Say hello.',
      isIssueActive: async () => true,
      env: credentialFreeEnv(home),
      executor: createLocalExecutor(),
      killGraceMs: 1000,
    });
    const started = performance.now();
    const result = await step(harness.context);
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(result).toMatchObject({ ok: false, code, turns });
    expect(result.ok ? '' : result.message).toMatch(message);
    expect(await liveGroupMembers(bridgePid(harness))).toEqual([]);
  });
});
