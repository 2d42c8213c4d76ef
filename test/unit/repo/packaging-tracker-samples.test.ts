// config/samples/trackers: one runnable sample per tracker kind (the memory board is
// config/samples/workflow-board.yaml). Each must be a valid Workflow whose WORKFLOW.md loads
// without warnings, name where its key or board comes from, and poll: the linear, github and
// jira samples against their stand-ins (the sample's own settings, only the endpoint pointed
// at the stand-in), the local one from its own ConfigMap.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { workflowSchema } from '../../../src/api/index.js';
import { podTemplateProblems } from '../../../src/controller/shared/pod-template-check.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';
import { TRACKER_KINDS, createTracker } from '../../../src/tracker/index.js';
import type { WorkflowConfig } from '../../../src/workflow/config.js';
import { fixtureIssues } from '../../support/fakes/jira-data.js';
import { type JiraStandIn, startJiraStandIn } from '../../support/fakes/jira-server.js';
import { fixtureData } from '../../support/fakes/linear-data.js';
import { type LinearStandIn, startLinearStandIn } from '../../support/fakes/linear-server.js';
import { type GithubStandIn, startGithubStandIn } from '../../support/fakes/github-server.js';

const samples = join(import.meta.dirname, '../../..', 'config', 'samples');

interface K8sObject {
  kind: string;
  metadata: { name: string };
  spec?: {
    workflow?: string;
    trackerSecretRef?: { name: string; key: string };
    trackerBoardRef?: { name: string };
    podTemplate?: V1PodTemplateSpec;
  };
  data?: Record<string, string>;
}

const objectsOf = (path: string): K8sObject[] =>
  parseAllDocuments(readFileSync(path, 'utf8')).map((doc) => doc.toJS() as K8sObject);

const trackerSamples = readdirSync(join(samples, 'trackers'))
  .filter((name) => name.endsWith('.yaml'))
  .map((name) => ({ name, objects: objectsOf(join(samples, 'trackers', name)) }));

const workflowOf = (objects: K8sObject[]) => objects.find((object) => object.kind === 'Workflow')!;
const configOf = (workflow: K8sObject): WorkflowConfig =>
  loadWorkflowText(workflow.spec!.workflow!, `Workflow ${workflow.metadata.name}`).config;

describe('config/samples/trackers', () => {
  it('has one sample per tracker kind, the memory board beside them', () => {
    const kinds = trackerSamples.map(({ objects }) => configOf(workflowOf(objects)).tracker.kind);
    const board = configOf(workflowOf(objectsOf(join(samples, 'workflow-board.yaml'))));
    expect([board.tracker.kind, ...kinds].sort()).toEqual([...TRACKER_KINDS].sort());
  });

  it.each(trackerSamples.map(({ name, objects }) => [name, objects] as const))(
    '%s is a valid Workflow: API schema, WORKFLOW.md without warnings, four hooks, pod template',
    (_name, objects) => {
      const workflow = workflowOf(objects);
      expect(workflowSchema.safeParse(workflow).error).toBeUndefined();
      const loaded = loadWorkflowText(workflow.spec!.workflow!, workflow.metadata.name);
      expect(loaded.warnings).toEqual([]);
      const { afterCreate, beforeRun, afterRun, beforeRemove } = loaded.config.hooks;
      expect([afterCreate, beforeRun, afterRun, beforeRemove].every((hook) => !!hook)).toBe(true);
      expect(podTemplateProblems(workflow.spec!.podTemplate)).toEqual([]);
    },
  );

  it.each(
    trackerSamples
      .filter(({ name }) => name !== 'local.yaml')
      .map(({ name, objects }) => [name, workflowOf(objects)] as const),
  )('%s takes its key from a Secret, never from WORKFLOW.md', (_name, workflow) => {
    expect(workflow.spec!.trackerSecretRef).toEqual({
      name: expect.any(String) as string,
      key: expect.any(String) as string,
    });
    expect(configOf(workflow).tracker.apiKey ?? null).toBeNull();
  });
});

describe('the tracker samples poll', () => {
  const KEY = 'sample-key-0123456789abcdef';
  let linear: LinearStandIn;
  let github: GithubStandIn;
  let jira: JiraStandIn;
  beforeAll(async () => {
    linear = await startLinearStandIn(fixtureData(), KEY);
    github = await startGithubStandIn({ token: KEY, repository: 'acme/app' });
    jira = await startJiraStandIn('bot@acme.com', KEY);
    jira.issues = fixtureIssues();
  });
  afterAll(async () => {
    await Promise.all([linear.close(), github.close(), jira.close()]);
  });

  const sample = (name: string) => trackerSamples.find((entry) => entry.name === name)!.objects;
  const pointedAt = (config: WorkflowConfig, endpoint: string): WorkflowConfig => ({
    ...config,
    tracker: { ...config.tracker, endpoint },
  });

  it.each([
    ['linear.yaml', () => linear],
    ['github.yaml', () => github],
    ['jira.yaml', () => jira],
  ])('%s asks its stand-in for candidates with the key from its Secret', async (name, standIn) => {
    const config = pointedAt(configOf(workflowOf(sample(name))), standIn().url);
    const before = standIn().requests.length;
    const tracker = createTracker(config, { apiKey: KEY, env: {} });
    await expect(tracker.fetchCandidates()).resolves.toBeInstanceOf(Array);
    // The stand-in did answer (and GitHub's found nothing off its documented API).
    expect(standIn().requests.length).toBeGreaterThan(before);
    expect(github.violations).toEqual([]);
  });

  it('local.yaml reads its board from its own ConfigMap: BOARD-1 is a candidate, BOARD-2 waits', async () => {
    const objects = sample('local.yaml');
    const workflow = workflowOf(objects);
    const board = objects.find(
      (object) =>
        object.kind === 'ConfigMap' &&
        object.metadata.name === workflow.spec!.trackerBoardRef!.name,
    );
    const warnings: string[] = [];
    const tracker = createTracker(configOf(workflow), {
      files: board!.data!,
      onWarning: (message) => warnings.push(message),
    });
    const candidates = await tracker.fetchCandidates();
    expect(candidates.map((issue) => [issue.identifier, issue.state])).toEqual([
      ['BOARD-1', 'Todo'],
    ]);
    expect(candidates[0]!.title).toBe('Write a hello file');
    expect(warnings).toEqual([]);
  });
});
