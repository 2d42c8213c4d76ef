import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../src/workflow/config.js';
import { normalizeIssue } from '../../../../src/workflow/issue.js';
import { isLorenzError } from '../../../../src/workflow/errors.js';
import {
  inputsConfigMap,
  renderRunInputs,
  type RenderBudget,
} from '../../../../src/controller/issuerun/inputs.js';

const issue = normalizeIssue({ identifier: 'ENG-1', title: "it's $(rm -rf /) `x`", state: 'Todo' });

function inputsFor(
  hooks: Record<string, unknown>,
  promptTemplate: string,
  size = 1,
  budget?: RenderBudget,
) {
  const { config } = parseConfig({ hooks });
  return renderRunInputs({
    workflowText: '---\n---\nprompt',
    config,
    promptTemplate,
    issue,
    run: { run: 'eng-1', identifier: 'ENG-1', attempt: null, ensembleSize: size },
    ...(budget ? { budget } : {}),
  });
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('run inputs', () => {
  it('renders the prompt per slot and the hooks, with a manifest of sha256 digests', async () => {
    const inputs = await inputsFor(
      { after_create: 'echo {{ issue.title }}', before_run: 'echo plain {{ x }}' },
      '{{ issue.identifier }} slot {{ ensemble.slot_index }} of {{ ensemble.size }}',
      2,
    );
    expect(inputs.files['prompt-0.md']).toBe('ENG-1 slot 0 of 2');
    expect(inputs.files['prompt-1.md']).toBe('ENG-1 slot 1 of 2');
    const hooks = JSON.parse(inputs.files['hooks.json'] ?? '{}') as Record<string, string | null>;
    expect(hooks.after_create).toBe("echo 'it'\\''s $(rm -rf /) `x`'");
    expect(hooks.before_run).toBe('echo plain {{ x }}');
    expect(hooks.after_run).toBeNull();
    for (const [name, digest] of Object.entries(inputs.manifest.files)) {
      expect(digest).toBe(`sha256:${sha256(inputs.files[name] ?? '')}`);
    }
    expect(Object.keys(inputs.manifest.files)).not.toContain('manifest.json');
    expect(inputs.digest).toBe(`sha256:${sha256(inputs.files['manifest.json'] ?? '')}`);
  });

  it('is deterministic, so a re-created ConfigMap is identical', async () => {
    const first = await inputsFor(
      { after_run: 'echo {{ issue.identifier }}' },
      'hi {{ issue.title }}',
    );
    const second = await inputsFor(
      { after_run: 'echo {{ issue.identifier }}' },
      'hi {{ issue.title }}',
    );
    expect(second.files).toEqual(first.files);
    expect(second.digest).toBe(first.digest);
  });

  it.each([
    ['prompt typo', {}, '{{ issue.titel }}', 'template_render_error'],
    ['hook typo', { before_run: 'echo {{ issue.nope }}' }, 'ok', 'template_render_error'],
  ])('%s throws the engine error before anything exists', async (_name, hooks, prompt, code) => {
    try {
      await inputsFor(hooks, prompt);
      expect.unreachable('rendering should fail');
    } catch (error) {
      expect(isLorenzError(error) && error.code).toBe(code);
    }
  });

  it('makes an immutable ConfigMap owned by the run', async () => {
    const inputs = await inputsFor({}, 'p');
    const owner = {
      apiVersion: 'lorenz.dev/v1alpha1',
      kind: 'IssueRun',
      name: 'eng-1',
      uid: 'u1',
      controller: true,
    };
    const configMap = inputsConfigMap({ run: 'eng-1', namespace: 'ns', owner, inputs });
    expect(configMap.metadata?.name).toBe('eng-1-inputs');
    expect(configMap.immutable).toBe(true);
    expect(configMap.metadata?.ownerReferences).toEqual([owner]);
    expect(configMap.data).toEqual(inputs.files);
  });

  // A slow template (here a loop of 2 million steps) must not hold the controller: each
  // render stops at the per-template limit, other work runs between two renders, and the
  // whole run stops at the total budget.
  const SLOW = '{% for i in (1..2000000) %}{% endfor %}{{ issue.identifier }}';

  it("stops one slow render at the controller's per-template limit, naming it", async () => {
    const started = process.cpuUsage();
    await expect(inputsFor({}, SLOW, 1, { perTemplateMs: 50, totalMs: 5000 })).rejects.toThrow(
      /template render limit exceeded.*at most 50 ms/,
    );
    // CPU time: the wall clock of a loaded machine runs on while this process waits.
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(1000);
  });

  it('lets other work run between the renders of an ensemble, and stops at the total budget', async () => {
    const quick = '{% for i in (1..200000) %}{% endfor %}{{ ensemble.slot_index }}';
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    // CPU time, not wall time: on a loaded machine the wall clock runs on while this process
    // waits for a core (the budget stops the renders; how long the machine takes is not ours).
    const started = process.cpuUsage();
    let message = '';
    try {
      // The per-template limit is far above the total, so only the total can stop the run: on
      // a loaded machine one render may take longer than 250 ms, and must still count as
      // running out of the total budget, not as one slow template.
      await inputsFor({}, quick, 100, { perTemplateMs: 60_000, totalMs: 300 }).catch(
        (error: Error) => (message = error.message),
      );
    } finally {
      clearInterval(timer);
    }
    const { user, system } = process.cpuUsage(started);
    const cpuMs = (user + system) / 1000;
    const done =
      /rendering the run's inputs took longer than 300 ms \(done: the hooks and (\d+) of 100 prompts\)/.exec(
        message,
      );
    expect(done, message).not.toBeNull();
    expect(cpuMs).toBeLessThan(1500);
    // The timer fired between renders (at least once between every two of them, however
    // slow the machine is): the event loop was never held for the whole run.
    const rendered = Number(done?.[1]);
    expect(rendered).toBeLessThan(100);
    expect(ticks).toBeGreaterThanOrEqual(Math.max(1, rendered - 1));
  });
});
