// config/samples is what a newcomer applies first: every sample must be a valid object of
// its kind, its WORKFLOW.md must load without warnings, and the inline one's hooks and
// prompt must do what the demo shows (run here in real bash, in a scratch workspace).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { issueRunSchema, workflowSchema } from '../../../src/api/index.js';
import { podTemplateProblems } from '../../../src/controller/shared/pod-template-check.js';
import { renderHookCommand } from '../../../src/template/hook.js';
import { renderPrompt, soloEnsemble } from '../../../src/template/prompt.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';

const root = join(import.meta.dirname, '../../..');
const samplesDir = join(root, 'config', 'samples');
const kustomization = parse(readFileSync(join(samplesDir, 'kustomization.yaml'), 'utf8')) as {
  resources: string[];
};

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

const objects: K8sObject[] = kustomization.resources.flatMap((file) =>
  parseAllDocuments(readFileSync(join(samplesDir, file), 'utf8')).map(
    (doc) => doc.toJS() as K8sObject,
  ),
);
const byKind = (kind: string) => objects.filter((object) => object.kind === kind);
const workflowText = (workflow: K8sObject): string => {
  const spec = workflow.spec as {
    workflow?: string;
    workflowFrom?: { configMapKeyRef: { name: string; key: string } };
  };
  if (spec.workflow) return spec.workflow;
  const ref = spec.workflowFrom!.configMapKeyRef;
  const configMap = byKind('ConfigMap').find((object) => object.metadata.name === ref.name);
  return configMap!.data![ref.key]!;
};

describe('config/samples', () => {
  it('has inline Workflows (one a tracker board), a ConfigMap-sourced one with its ConfigMap, and an IssueRun', () => {
    expect(objects.map((object) => `${object.kind}/${object.metadata.name}`).sort()).toEqual([
      'ConfigMap/demo-workflow-md',
      'IssueRun/demo-1',
      'Workflow/board',
      'Workflow/demo',
      'Workflow/demo-from-configmap',
    ]);
  });

  it.each(byKind('Workflow').map((w) => [w.metadata.name, w] as const))(
    'Workflow %s is valid: API schema, WORKFLOW.md without warnings, scripted agent, four hooks, pod template',
    (_name, workflow) => {
      expect(workflow.apiVersion).toBe('lorenz.dev/v1alpha1');
      expect(workflowSchema.safeParse(workflow).error).toBeUndefined();
      const loaded = loadWorkflowText(workflowText(workflow), `Workflow ${workflow.metadata.name}`);
      expect(loaded.warnings).toEqual([]);
      expect(loaded.config.agent.kind).toBe('scripted');
      expect(loaded.config.agents.bridges.scripted?.bridgeCommand).toBe(
        'node /lorenz-bin/scripted-agent.mjs',
      );
      const { afterCreate, beforeRun, afterRun, beforeRemove } = loaded.config.hooks;
      expect([afterCreate, beforeRun, afterRun, beforeRemove].every((hook) => !!hook)).toBe(true);
      const podTemplate = (workflow.spec as { podTemplate: V1PodTemplateSpec }).podTemplate;
      expect(podTemplateProblems(podTemplate)).toEqual([]);
    },
  );

  it('the IssueRun is valid and runs the inline Workflow', () => {
    const [run] = byKind('IssueRun');
    expect(issueRunSchema.safeParse(run).error).toBeUndefined();
    const spec = run!.spec as { workflowRef: { name: string }; issue: unknown };
    expect(spec.workflowRef.name).toBe('demo');
    expect(normalizeIssue(spec.issue).identifier).toBe('DEMO-1');
  });
});

describe('the demo Workflow, run by hand', () => {
  const workspace = mkdtempSync(join(tmpdir(), 'lorenz-sample-'));
  afterAll(() => rmSync(workspace, { recursive: true, force: true }));
  const workflow = byKind('Workflow').find((object) => object.metadata.name === 'demo')!;
  const loaded = loadWorkflowText(workflowText(workflow), 'Workflow demo');
  const issue = normalizeIssue((byKind('IssueRun')[0]!.spec as { issue: unknown }).issue);
  const runHook = (command: string | null) =>
    execFileSync('bash', ['-lc', renderHookCommand(command!, issue)], {
      cwd: workspace,
      encoding: 'utf8',
    });

  it('renders a prompt that scripts the agent: read the issue, write notes, report usage', () => {
    const prompt = renderPrompt(loaded.promptTemplate, {
      issue,
      attempt: null,
      ensemble: soloEnsemble(),
    });
    expect(prompt).toContain('You are working on DEMO-1: Say hello from a Lorenz run.');
    expect(prompt).toMatch(/^@shell cat ISSUE\.md$/m);
    expect(prompt).toMatch(/^@write NOTES\.md Read the issue DEMO-1 and wrote this note\.$/m);
    expect(prompt).toMatch(/^@usage \d+ \d+$/m);
  });

  it('its four hooks succeed in order around what the agent writes', () => {
    expect(runHook(loaded.config.hooks.afterCreate)).toContain('after_create');
    expect(readFileSync(join(workspace, 'ISSUE.md'), 'utf8')).toBe(
      '# DEMO-1\n\nSay hello from a Lorenz run\n',
    );
    expect(runHook(loaded.config.hooks.beforeRun)).toContain('ISSUE.md');
    // What the scripted agent's `@write NOTES.md …` directive leaves behind.
    writeFileSync(join(workspace, 'NOTES.md'), 'Read the issue DEMO-1 and wrote this note.');
    expect(runHook(loaded.config.hooks.afterRun)).toContain('Read the issue DEMO-1');
    expect(runHook(loaded.config.hooks.beforeRemove)).toBe(
      'before_remove: cleaning up after DEMO-1\n',
    );
    expect(existsSync(join(workspace, 'ISSUE.md'))).toBe(true);
  });
});
