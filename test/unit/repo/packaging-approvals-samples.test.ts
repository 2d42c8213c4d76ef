// config/samples/approvals: a memory-board Workflow whose scripted agent asks before a force
// push (the demo's approvals walk-through applies it). It must be a valid Workflow, load
// without warnings, and its policy must say ask for the very request its prompt makes.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { workflowSchema } from '../../../src/api/index.js';
import { podTemplateProblems } from '../../../src/controller/shared/pod-template-check.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';
import { renderPrompt, soloEnsemble } from '../../../src/template/prompt.js';
import { decideApproval } from '../../../src/workflow/approvals-policy.js';

const dir = join(import.meta.dirname, '../../..', 'config', 'samples', 'approvals');

interface Sample {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: { workflow: string; podTemplate: V1PodTemplateSpec };
}

const [document, ...others] = parseAllDocuments(
  readFileSync(join(dir, 'workflow-approvals.yaml'), 'utf8'),
);
const sample = document!.toJS() as Sample;
const loaded = loadWorkflowText(sample.spec.workflow, 'Workflow approvals');

describe('config/samples/approvals', () => {
  it('holds the Workflow the demo applies', () => {
    expect(readdirSync(dir)).toContain('workflow-approvals.yaml');
    expect(others).toEqual([]);
    expect(`${sample.kind}/${sample.metadata.name}`).toBe('Workflow/approvals');
  });

  it('is a valid Workflow whose WORKFLOW.md loads without warnings', () => {
    expect(sample.apiVersion).toBe('lorenz.dev/v1alpha1');
    expect(workflowSchema.safeParse(sample).error).toBeUndefined();
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.tracker.kind).toBe('memory');
    expect(loaded.config.tracker.issues.map((issue) => issue.identifier)).toEqual(['APPROVE-1']);
    expect(loaded.config.agent.kind).toBe('scripted');
    expect(loaded.config.agents.bridges.scripted?.bridgeCommand).toBe(
      'node /lorenz-bin/scripted-agent.mjs',
    );
    expect(podTemplateProblems(sample.spec.podTemplate)).toEqual([]);
  });

  it('asks before the force push its prompt requests, and allows anything else', () => {
    const approvals = loaded.config.agent.approvals!;
    expect(approvals.rules).toHaveLength(1);
    expect(approvals.rules[0]).toMatchObject({ kinds: ['execute'], action: 'ask' });
    expect(approvals.rules[0]?.command?.source).toBe('git push --force*');

    const prompt = renderPrompt(loaded.promptTemplate, {
      issue: loaded.config.tracker.issues[0]!,
      attempt: null,
      ensemble: soloEnsemble(),
    });
    const request = /^@permission kind=(\S+) title="([^"]*)" command="([^"]*)"$/m.exec(prompt);
    expect(request).not.toBeNull();
    const [, toolKind, title, command] = request!;
    expect(
      decideApproval(approvals, {
        toolKind: toolKind!,
        title: title!,
        command: command!,
        paths: [],
      }),
    ).toEqual({
      action: 'ask',
      rule: 0,
      reason: 'A force push rewrites history that others may have pulled.',
    });
    expect(
      decideApproval(approvals, {
        toolKind: 'execute',
        title: 'x',
        command: 'git push origin main',
        paths: [],
      }).action,
    ).toBe('allow');
    expect(prompt).toMatch(/^@tool tracker_update_state \{"state":"Done"\}$/m);
  });
});
