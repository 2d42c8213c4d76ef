import type { Workflow } from '../../src/api/index.js';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  configMapManifest,
  createWorkflowFromConfigMap,
  createWorkflowOf,
  fourHooks,
  path,
  podTemplate,
  until,
  useOperatorEnv,
} from './operator-harness.js';

const FOUR_HOOKS = fourHooks({ after_create: 'echo cloned {{ issue.identifier }}' });

describe('IssueRun → Pod on the process node', () => {
  const env = useOperatorEnv();

  it('runs a Workflow with four hooks to Succeeded=True with the hook Events', async () => {
    await env.createWorkflow('happy', { hooks: FOUR_HOOKS });
    await until('the Workflow to be ready', async () => {
      const workflow = await env.admin.request<Workflow>({ path: path.workflows('happy') });
      return workflow.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
    });
    const writesBefore = env.controller?.writes() ?? 0;
    await env.createIssueRun('happy-1', 'happy', { identifier: 'ENG-1', title: 'Fix the bug' });
    const run = await env.finished('happy-1');
    // The Workflow's run counts are batched: wait for the write that reports this run.
    await until('the Workflow to count the run', async () => {
      const workflow = await env.admin.request<Workflow>({ path: path.workflows('happy') });
      return workflow.status?.runs?.succeeded === 1 ? true : undefined;
    });
    const writes = (env.controller?.writes() ?? 0) - writesBefore;
    expect(run.status?.phase, JSON.stringify(run.status, null, 2)).toBe('Succeeded');
    expect(run.status?.conditions?.find((c) => c.type === 'Succeeded')).toMatchObject({
      status: 'True',
      reason: 'Succeeded',
    });
    expect(run.status?.hooks?.map((hook) => [hook.name, hook.status, hook.exitCode])).toEqual([
      ['after_create', 'completed', 0],
      ['before_run', 'completed', 0],
      ['after_run', 'completed', 0],
      ['before_remove', 'completed', 0],
    ]);
    expect(run.status?.hooks?.[0]?.output).toBe('cloned ENG-1');
    expect(run.status?.turn).toBe(1);
    const events = await env.hookEvents('happy-1');
    expect(events.map((event) => event.reason)).toEqual([
      'HookStarted',
      'HookSucceeded',
      'HookStarted',
      'HookSucceeded',
      'HookStarted',
      'HookSucceeded',
      'HookStarted',
      'HookSucceeded',
    ]);
    expect(events[1]?.note).toContain('after_create completed in slot 0 (exit 0');
    expect(await env.runPodNames('happy-1')).toEqual(['happy-1-0-1']);
    const log = env.controller?.writeLog().slice(-writes) ?? [];
    process.stderr.write(
      `[operator] API writes for one single-slot run with four hooks: ${writes}\n`,
    );
    // 14, and the run's life in two Events (AttemptStarted, RunSucceeded).
    expect(writes, log.join('\n')).toBeLessThanOrEqual(16);
  });

  it('gives an IssueRun deleted and re-created under the same name Events of its own', async () => {
    await env.createWorkflow('again', { hooks: FOUR_HOOKS });
    await env.createIssueRun('again-1', 'again', { identifier: 'ENG-7', title: 'Twice' });
    const first = await env.finished('again-1');
    await env.admin.request({ method: 'DELETE', path: path.issueRuns('again-1') });
    await until('the first run and its Pod to be gone', async () => {
      const gone = await env.getRun('again-1').then(
        () => false,
        (error: unknown) => /404/.test(String(error)),
      );
      return gone && (await env.runPodNames('again-1')).length === 0 ? true : undefined;
    });
    await env.createIssueRun('again-1', 'again', { identifier: 'ENG-7', title: 'Twice' });
    const second = await env.finished('again-1');
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    expect(second.status?.phase, second.status?.message).toBe('Succeeded');
    const [before, after] = await Promise.all([
      env.hookEvents('again-1', first.metadata.uid),
      env.hookEvents('again-1', second.metadata.uid),
    ]);
    expect(before).toHaveLength(8);
    expect(after.map((event) => `${event.reason}:${event.note.split(' ')[0]}`)).toEqual(
      before.map((event) => `${event.reason}:${event.note.split(' ')[0]}`),
    );
    const fragment = (uid = '') => uid.replaceAll('-', '').slice(0, 8);
    for (const event of after)
      expect(event.metadata.name).toMatch(`again-1.${fragment(second.metadata.uid)}.0-1-`);
  });

  it('runs an ensemble:2 issue as two Pods and succeeds when one slot does', async () => {
    const prompt =
      'Work on {{ issue.identifier }}.\n' +
      '{% if ensemble.slot_index == 1 %}@stop refusal{% endif %}\n@write done.txt ok';
    await env.createWorkflow('ensemble', { prompt });
    await env.createIssueRun('ensemble-1', 'ensemble', {
      identifier: 'ENG-8',
      title: 'Two tries',
      labels: ['ensemble:2'],
    });
    const run = await env.finished('ensemble-1');
    expect(run.status?.phase, run.status?.message).toBe('Succeeded');
    expect(run.status?.message).toBe('slot 0: the run succeeded');
    expect((await env.runPodNames('ensemble-1')).sort()).toEqual([
      'ensemble-1-0-1',
      'ensemble-1-1-1',
    ]);
    const slots = run.status?.slots ?? [];
    expect(slots.map((slot) => [slot.slot, slot.phase, slot.podName])).toEqual([
      [0, 'Succeeded', 'ensemble-1-0-1'],
      [1, 'Failed', 'ensemble-1-1-1'],
    ]);
    expect(slots[1]?.reason).toBe('AgentFailed');
    expect(slots[1]?.message).toContain('refusal');
  });

  it('fails with TemplateError before any Pod exists', async () => {
    await env.createWorkflow('typo', { prompt: 'Hello {{ issue.titel }}' });
    await env.createIssueRun('typo-1', 'typo', { identifier: 'ENG-2', title: 'x' });
    const run = await env.finished('typo-1');
    expect(run.status?.reason).toBe('TemplateError');
    expect(run.status?.message).toContain('issue.titel');
    expect(await env.runPodNames('typo-1')).toEqual([]);
    await expect(env.admin.request({ path: path.configMaps('typo-1-inputs') })).rejects.toThrow(
      /404/,
    );
  });

  it('fails with HookFailed when after_create fails, and runs no agent', async () => {
    const hooks = { after_create: 'echo broken >&2; exit 7', before_run: 'echo never' };
    await env.createWorkflow('broken', { hooks });
    await env.createIssueRun('broken-1', 'broken', { identifier: 'ENG-3', title: 'x' });
    const run = await env.finished('broken-1');
    expect(run.status?.phase).toBe('Failed');
    expect(run.status?.reason).toBe('HookFailed');
    expect(run.status?.message).toContain('hook failed with status 7: broken');
    expect(run.status?.hooks).toEqual([
      expect.objectContaining({
        name: 'after_create',
        status: 'failed',
        exitCode: 7,
        output: 'broken',
      }),
    ]);
    expect(run.status?.turn).toBe(0);
    const events = await env.hookEvents('broken-1');
    expect(events.map((event) => event.reason)).toEqual(['HookStarted', 'HookFailed']);
  });

  it('fails with HookTimedOut when a hook outlives hooks.timeout_ms', async () => {
    const hooks = { timeout_ms: 1000, before_run: 'sleep 30' };
    await env.createWorkflow('slow', { hooks });
    await env.createIssueRun('slow-1', 'slow', { identifier: 'ENG-4', title: 'x' });
    const run = await env.finished('slow-1');
    expect(run.status?.reason).toBe('HookTimedOut');
    expect(run.status?.message).toContain('hook timed out after 1000ms');
    expect(run.status?.hooks?.find((hook) => hook.name === 'before_run')).toMatchObject({
      status: 'failed',
      exitCode: null,
    });
    expect((await env.hookEvents('slow-1')).map((event) => event.reason)).toContain('HookTimedOut');
  });

  it('passes a hostile issue title through hooks as one inert word', async () => {
    const marker = `/tmp/lorenz-pwned-${process.pid}`;
    const title = `it's "$(touch ${marker})" \`touch ${marker}\`; touch ${marker} {{ issue.identifier }} %}\nline2`;
    const hooks = { after_create: 'printf %s {{ issue.title }}' };
    await env.createWorkflow('hostile', { hooks });
    await env.createIssueRun('hostile-1', 'hostile', { identifier: 'ENG-5', title });
    const run = await env.finished('hostile-1');
    expect(run.status?.phase, run.status?.message).toBe('Succeeded');
    expect(run.status?.hooks?.[0]?.output).toBe(title);
    expect(existsSync(marker)).toBe(false);
  });

  it('reloads a Workflow from its ConfigMap and keeps the last good config on a bad edit', async () => {
    const configMap = (text: string) =>
      configMapManifest('gitops-workflow', { 'WORKFLOW.md': text });
    await env.createConfigMap('gitops-workflow', { 'WORKFLOW.md': env.workflowText() });
    await createWorkflowFromConfigMap(env, 'gitops', 'gitops-workflow');
    const readWorkflow = () => env.admin.request<Workflow>({ path: path.workflows('gitops') });
    const condition = (workflow: Workflow, type: string) =>
      workflow.status?.conditions?.find((c) => c.type === type);
    const good = await until('the Workflow to load', async () => {
      const workflow = await readWorkflow();
      return condition(workflow, 'ConfigValid')?.status === 'True' ? workflow : undefined;
    });
    expect(good.status?.lastGoodConfigMap).toMatch(/^gitops-config-[0-9a-f]{8}$/);
    await env.admin.request({
      method: 'PUT',
      path: path.configMaps('gitops-workflow'),
      body: configMap('---\nhooks:\n  timeout_ms: -5\n---\nhi'),
    });
    const bad = await until('the bad edit to be reported', async () => {
      const workflow = await readWorkflow();
      return condition(workflow, 'ConfigValid')?.status === 'False' ? workflow : undefined;
    });
    expect(condition(bad, 'ConfigValid')?.message).toContain('hooks.timeout_ms');
    expect(condition(bad, 'Ready')?.status).toBe('True');
    expect(bad.status?.lastGoodConfigMap).toBe(good.status?.lastGoodConfigMap);
  });

  const agent = podTemplate.spec.containers[0]!;
  const templateWith = (spec: object, container: object = {}) => ({
    spec: { ...spec, containers: [{ ...agent, ...container }] },
  });
  it.each<[string, object, string, RegExp]>([
    [
      'hostNetwork',
      templateWith({ hostNetwork: true }),
      'spec.hostNetwork',
      /hostNetwork must not be true/,
    ],
    ['hostPID', templateWith({ hostPID: true }), 'spec.hostPID', /hostPID must not be true/],
    ['hostIPC', templateWith({ hostIPC: true }), 'spec.hostIPC', /hostIPC must not be true/],
    [
      'an API token',
      templateWith({ automountServiceAccountToken: true }),
      'spec.automountServiceAccountToken',
      /the agent gets no Kubernetes credentials/,
    ],
    [
      'a privileged container',
      templateWith({}, { securityContext: { privileged: true } }),
      'spec.containers[0].securityContext.privileged',
      /privileged containers are refused/,
    ],
    [
      'privilege escalation',
      templateWith({}, { securityContext: { allowPrivilegeEscalation: true } }),
      'spec.containers[0].securityContext.allowPrivilegeEscalation',
      /allowPrivilegeEscalation must not be true/,
    ],
    [
      'a hostPath volume',
      templateWith({ volumes: [{ name: 'node-root', hostPath: { path: '/' } }] }),
      'spec.volumes[0]',
      /hostPath volumes are refused/,
    ],
    [
      'a reserved volume name',
      templateWith({ volumes: [{ name: 'lorenz-bin', emptyDir: {} }] }),
      'spec.volumes[0].name',
      /the volume name is reserved by Lorenz/,
    ],
    [
      'the runner container name',
      { spec: { containers: [agent, { name: 'install-runner', image: 'x' }] } },
      'spec.containers[1].name',
      /"install-runner" is reserved for the Lorenz runner/,
    ],
  ])(
    'refuses a Workflow with %s at admission, naming the field',
    async (_case, template, field, why) => {
      const error = await env.admin
        .request({
          method: 'POST',
          path: path.workflows(),
          body: {
            apiVersion: 'lorenz.dev/v1alpha1',
            kind: 'Workflow',
            metadata: { name: 'unsafe' },
            spec: { workflow: env.workflowText(), podTemplate: template },
          },
        })
        .then(
          () => undefined,
          (rejected: unknown) => rejected as Error,
        );
      expect(error?.message).toMatch(/ 422 /);
      expect(error?.message).toContain(`spec.podTemplate.${field}`);
      expect(error?.message).toMatch(why);
    },
  );

  it('keeps safe security fields, and reports a template problem that admission lets through', async () => {
    const kept = templateWith(
      { securityContext: { runAsUser: 1000 }, volumes: [{ name: 'cache', emptyDir: {} }] },
      {
        securityContext: { readOnlyRootFilesystem: true },
        volumeMounts: [{ name: 'cache', mountPath: '/workspace' }],
      },
    );
    await createWorkflowOf(env, 'clash', { workflow: env.workflowText(), podTemplate: kept });
    const stored = await env.admin.request<Workflow>({ path: path.workflows('clash') });
    expect(stored.spec.podTemplate).toEqual(kept);
    const invalid = await until('the Workflow to report the clash', async () => {
      const workflow = await env.admin.request<Workflow>({ path: path.workflows('clash') });
      return workflow.status?.conditions?.find(
        (c) => c.type === 'ConfigValid' && c.status === 'False',
      );
    });
    expect(invalid.reason).toBe('WorkflowInvalid');
    expect(invalid.message).toContain('the mount path /workspace is reserved by Lorenz');
    await env.createIssueRun('clash-1', 'clash', { identifier: 'ENG-6', title: 'x' });
    const run = await until('the IssueRun to report the clash', async () => {
      const current = await env.getRun('clash-1');
      return current.status?.reason === 'WorkflowInvalid' ? current : undefined;
    });
    expect(run.status?.message).toContain('the mount path /workspace is reserved by Lorenz');
    expect(await env.runPodNames('clash-1')).toEqual([]);
  });
});
