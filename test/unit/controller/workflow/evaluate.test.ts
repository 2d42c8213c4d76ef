import { describe, expect, it } from 'vitest';
import { Reasons } from '../../../../src/api/index.js';
import { evaluateWorkflow } from '../../../../src/controller/workflow/evaluate.js';
import { workflow } from '../../../support/fakes/objects.js';

const noConfigMaps = () => undefined;
const text = (hook: string) =>
  `---\ntracker:\n  kind: memory\nhooks:\n  after_create: ${hook}\n---\nWork on {{ issue.identifier }}.\n`;

describe('evaluateWorkflow', () => {
  it('loads a text once: the same text evaluated again shares what it loaded to', () => {
    const first = evaluateWorkflow(workflow({ workflow: text('echo one') }), noConfigMaps);
    const again = evaluateWorkflow(workflow({ workflow: text('echo one') }), noConfigMaps);
    if (!first.ok || !again.ok) throw new Error('the text should load');
    expect(again.spec.loaded).toBe(first.spec.loaded);
    expect(again.spec.digest).toBe(first.spec.digest);
  });

  it('a changed text is loaded again, with its own hooks and digest', () => {
    const before = evaluateWorkflow(workflow({ workflow: text('echo one') }), noConfigMaps);
    const after = evaluateWorkflow(workflow({ workflow: text('echo two') }), noConfigMaps);
    if (!before.ok || !after.ok) throw new Error('both texts should load');
    expect(after.spec.loaded.config.hooks.afterCreate).toBe('echo two');
    expect(after.spec.digest).not.toBe(before.spec.digest);
  });

  it('a broken text stays broken when evaluated again, with the same message', () => {
    const broken = workflow({ workflow: text('echo {% if issue.title %}') });
    const first = evaluateWorkflow(broken, noConfigMaps);
    const again = evaluateWorkflow(broken, noConfigMaps);
    expect(first.ok).toBe(false);
    expect(again).toEqual(first);
    if (!first.ok) {
      expect(first.problem.reason).toBe(Reasons.ConfigInvalid);
      expect(first.problem.message).toContain('after_create');
    }
  });
});
