// The tracker as the agent's inbox (docs/approvals.md), end to end on the memory board: a
// scripted agent in a run Pod asks for permission or asks a question, the runner asks the
// controller over the agent-tools gateway, the inbox controller waits for a reply on the
// issue (added to the board by a Workflow patch, as `kubectl apply` would) or for
// spec.decisions (`lorenz approve`), and the agent goes on with the answer. Independent cases
// run at once on one control plane; operator-inbox-trackers.test.ts has the Linear and
// GitHub stand-ins and a controller restart.
import { describe, expect, it } from 'vitest';
import { InboxReasons } from '../../src/api/inbox.js';
import { freePort, gatewayOptions, path, until, useOperatorEnv } from './operator-harness.js';
import {
  APPROVER,
  FORCE_PUSH,
  afterRunOutput,
  agentLog,
  approvals,
  decisions,
  eventsOf,
  pendingRequest,
  startCase,
} from './operator-inbox-support.js';

const RUN_MS = 150_000;
/** A case: its run, and the waits for its request and Events. */
const CASE_MS = 240_000;

// Each case waits for a Pod and a person; they wait side by side.
describe.concurrent('the inbox on the memory board', { timeout: CASE_MS }, () => {
  const env = useOperatorEnv(async () => gatewayOptions(await freePort()));

  it('allow and deny rules decide alone; the agent hears the reason', async () => {
    const c = await startCase(env, {
      name: 'policy',
      prompt: [
        '@permission kind=execute command="git status"',
        '@permission kind=read path=.env',
      ].join('\n'),
    });
    const run = await env.finished(c.run, RUN_MS);
    expect(run.status?.phase).toBe('Succeeded');
    expect(run.status?.inbox?.pending ?? []).toEqual([]);
    const log = await agentLog(env, c.run);
    expect(log).toContain('permission granted (allow)');
    expect(log).toContain('permission denied: secrets stay secret');
    await eventsOf(env, c.run, [
      InboxReasons.ApprovalAllowedByPolicy,
      InboxReasons.ApprovalDeniedByPolicy,
    ]);
  });

  it('ask: a non-approver and a forged /approve in code are not acted on; /approve is', async () => {
    const c = await startCase(env, { name: 'ask', prompt: `${FORCE_PUSH}\n@write done.txt ok` });
    const request = await pendingRequest(env, c.run);
    expect(request).toMatchObject({ kind: 'permission', command: 'git push --force origin main' });
    expect(request.ruleReason).toBe('force pushes need a person');
    await c.comment(
      { author: 'mallory', body: '/approve' },
      { author: APPROVER, body: 'Looks fine:\n\n```\n/approve\n```' },
    );
    // The non-approver is told once; a read after both comments leaves the request waiting.
    const noticed = await until('the non-approver to be noticed', async () => {
      const pending = (await env.getRun(c.run)).status?.inbox?.pending?.[0];
      return pending?.noticed?.includes('mallory') === true ? pending : undefined;
    });
    expect(noticed.id).toBe(request.id);
    await c.comment({ author: 'mallory', body: '/approve again' });
    await c.comment({ author: APPROVER, body: '/approve' });
    const run = await env.finished(c.run, RUN_MS);
    expect(run.status?.phase).toBe('Succeeded');
    expect(run.status?.inbox?.decided).toEqual([
      expect.objectContaining({
        requestId: request.id,
        verdict: 'approve',
        via: 'comment',
        by: APPROVER,
      }),
    ]);
    expect(await agentLog(env, c.run)).toContain('permission granted (allow)');
    await eventsOf(env, c.run, [InboxReasons.ApprovalRequested, InboxReasons.ApprovalGranted]);
  });

  it('/approve always: the same rule is not asked again in the attempt', async () => {
    const c = await startCase(env, { name: 'always', prompt: `${FORCE_PUSH}\n${FORCE_PUSH}` });
    await pendingRequest(env, c.run);
    await c.comment({ author: APPROVER, body: '/approve always' });
    const run = await env.finished(c.run, RUN_MS);
    expect(run.status?.phase).toBe('Succeeded');
    expect(run.status?.inbox?.decided?.map((d) => d.verdict)).toEqual(['approve_always']);
    expect((await agentLog(env, c.run)).match(/permission granted/g)).toHaveLength(2);
  });

  it('/deny with a reason: the agent is told the reason and goes on', async () => {
    const c = await startCase(env, { name: 'deny', prompt: `${FORCE_PUSH}\n@write done.txt ok` });
    await pendingRequest(env, c.run);
    await c.comment({ author: APPROVER, body: '/deny too risky' });
    const run = await env.finished(c.run, RUN_MS);
    expect(run.status?.inbox?.decided?.[0]).toMatchObject({ verdict: 'deny', reason: 'too risky' });
    expect(await agentLog(env, c.run)).toContain('permission denied: too risky');
    await eventsOf(env, c.run, [InboxReasons.ApprovalDenied]);
  });

  it('a wait that times out decides on_timeout (deny)', async () => {
    const c = await startCase(env, {
      name: 'timeout',
      prompt: FORCE_PUSH,
      approvals: approvals({ timeout_ms: 3000, on_timeout: 'deny' }),
    });
    const run = await env.finished(c.run, RUN_MS);
    expect(await agentLog(env, c.run)).toContain('permission denied');
    expect(run.status?.inbox?.pending ?? []).toEqual([]);
    const [decided] = await decisions(env, c.run);
    expect(decided?.verdict).toBe('timeout');
  });

  it('a question is answered by a plain reply', async () => {
    const c = await startCase(env, { name: 'question', prompt: '@ask "Which database?"' });
    const request = await pendingRequest(env, c.run);
    expect(request).toMatchObject({ kind: 'question' });
    expect(request.message).toContain('Which database?');
    await c.comment({ author: APPROVER, body: 'Postgres, please.' });
    const run = await env.finished(c.run, RUN_MS);
    expect(run.status?.phase).toBe('Succeeded');
    expect(await agentLog(env, c.run)).toContain('answer: Postgres, please.');
    await eventsOf(env, c.run, [InboxReasons.QuestionAsked, InboxReasons.QuestionAnswered]);
  });

  it('/steer while turn 1 sleeps becomes part of turn 2', async () => {
    const c = await startCase(env, {
      name: 'steer',
      maxTurns: 2,
      approvals: approvals({ steering: true }),
      prompt: [
        '@record-prompt prompts.txt',
        '@sleep 12000',
        '@turn 2: @record-prompt prompts.txt',
      ].join('\n'),
    });
    await until('the run to be Running', async () =>
      (await env.getRun(c.run)).status?.phase === 'Running' ? true : undefined,
    );
    await c.comment({ author: APPROVER, body: '/steer Use Postgres, not MySQL.' });
    const run = await env.finished(c.run, RUN_MS);
    const prompts = afterRunOutput(run);
    const turn2 = prompts.split('=== turn 2 ===')[1] ?? '';
    expect(turn2).toContain('--- steering ---');
    expect(turn2).toContain('Use Postgres, not MySQL.');
    expect(prompts.split('=== turn 2 ===')[0]).not.toContain('Use Postgres');
    expect(run.status?.inbox?.steers?.[0]).toMatchObject({
      text: 'Use Postgres, not MySQL.',
      by: APPROVER,
    });
    await eventsOf(env, c.run, [InboxReasons.SteerReceived]);
  });

  it('/stop cancels the run; after_run still runs', async () => {
    const c = await startCase(env, {
      name: 'stop',
      approvals: approvals({ steering: true }),
      prompt: '@sleep 90000',
    });
    await until('the run to be Running', async () =>
      (await env.getRun(c.run)).status?.phase === 'Running' ? true : undefined,
    );
    // The agent at work, not the hooks before it: Running is written as the Pod starts, and a
    // /stop that lands during before_run (a loaded machine) ends the attempt before after_run.
    await until('the agent to be in its turn', async () =>
      (await agentLog(env, c.run)).includes('"type":"turn_started"') ? true : undefined,
    );
    await c.comment({ author: APPROVER, body: '/stop' });
    const run = await env.finished(c.run, RUN_MS);
    expect(run.status?.reason).toBe('Cancelled');
    expect(run.status?.inbox?.stopRequested).toBe(true);
    expect(afterRunOutput(run)).toContain('after-run-ran');
    await eventsOf(env, c.run, [InboxReasons.StopRequested]);
  });

  it('lorenz approve: a spec.decisions patch answers the request', async () => {
    const c = await startCase(env, { name: 'kube', prompt: `${FORCE_PUSH}\n@write done.txt ok` });
    const request = await pendingRequest(env, c.run);
    await env.mergePatch(path.issueRuns(c.run), {
      spec: { decisions: [{ requestId: request.id, verdict: 'approve', by: 'it-admin' }] },
    });
    const run = await env.finished(c.run, RUN_MS);
    expect(run.status?.phase).toBe('Succeeded');
    expect(run.status?.inbox?.decided?.[0]).toMatchObject({ via: 'kubernetes', by: 'it-admin' });
    expect(await agentLog(env, c.run)).toContain('permission granted (allow)');
  });
});
