import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/workflow/config.js';
import { normalizeIssue } from '../../src/workflow/issue.js';
import { isLorenzError } from '../../src/workflow/errors.js';
import { inputsConfigMap, renderRunInputs } from '../../src/controller/issuerun/inputs.js';

const issue = normalizeIssue({ identifier: 'ENG-1', title: "it's $(rm -rf /) `x`", state: 'Todo' });

function inputsFor(hooks: Record<string, unknown>, promptTemplate: string, size = 1) {
  const { config } = parseConfig({ hooks });
  return renderRunInputs({
    workflowText: '---\n---\nprompt',
    config,
    promptTemplate,
    issue,
    run: { run: 'eng-1', identifier: 'ENG-1', attempt: null, ensembleSize: size },
  });
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('run inputs', () => {
  it('renders the prompt per slot and the hooks, with a manifest of sha256 digests', () => {
    const inputs = inputsFor(
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

  it('is deterministic, so a re-created ConfigMap is identical', () => {
    const first = inputsFor({ after_run: 'echo {{ issue.identifier }}' }, 'hi {{ issue.title }}');
    const second = inputsFor({ after_run: 'echo {{ issue.identifier }}' }, 'hi {{ issue.title }}');
    expect(second.files).toEqual(first.files);
    expect(second.digest).toBe(first.digest);
  });

  it.each([
    ['prompt typo', {}, '{{ issue.titel }}', 'template_render_error'],
    ['hook typo', { before_run: 'echo {{ issue.nope }}' }, 'ok', 'template_render_error'],
  ])('%s throws the engine error before anything exists', (_name, hooks, prompt, code) => {
    try {
      inputsFor(hooks, prompt);
      expect.unreachable('rendering should fail');
    } catch (error) {
      expect(isLorenzError(error) && error.code).toBe(code);
    }
  });

  it('makes an immutable ConfigMap owned by the run', () => {
    const inputs = inputsFor({}, 'p');
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
});
