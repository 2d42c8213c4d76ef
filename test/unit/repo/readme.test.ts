// The README is the front door: short, the two commands first, the three paths on the first
// screen, and its first Workflow one the cluster would take.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { workflowSchema } from '../../../src/api/index.js';
import { podTemplateProblems } from '../../../src/controller/shared/pod-template-check.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';

const readme = readFileSync(join(import.meta.dirname, '../../..', 'README.md'), 'utf8');
const lines = readme.split('\n');

describe('README.md', () => {
  it('is under 12 KB', () => {
    expect(Buffer.byteLength(readme)).toBeLessThan(12_000);
  });

  it('starts with the two commands', () => {
    const top = lines.slice(0, 6).join('\n');
    expect(top).toMatch(/^make demo\b/m);
    expect(top).toMatch(/^make test\b/m);
  });

  it('links the three paths within the first screen (the first 12 lines)', () => {
    const screen = lines.slice(0, 12).join('\n');
    for (const anchor of [
      '#try-it-make-demo',
      '#run-it-on-a-cluster-helm-with-your-own-images',
      '#run-it-on-a-laptop-lorenz-run-lorenz-poll---dry-run',
    ]) {
      expect(screen).toContain(`](${anchor})`);
    }
  });

  it('shows a first Workflow the apiserver and the controller would accept', () => {
    const block = /```yaml\n# 4\. A first Workflow[^\n]*\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    const workflow = parse(block!) as {
      spec: { workflow: string; podTemplate: V1PodTemplateSpec; trackerSecretRef: unknown };
    };
    expect(workflowSchema.safeParse(workflow).error).toBeUndefined();
    const loaded = loadWorkflowText(workflow.spec.workflow, 'README Workflow');
    expect(loaded.warnings).toEqual([]);
    expect(loaded.config.tracker.kind).toBe('linear');
    expect(workflow.spec.trackerSecretRef).toEqual({ name: 'linear', key: 'api_key' });
    expect(podTemplateProblems(workflow.spec.podTemplate)).toEqual([]);
  });
});
