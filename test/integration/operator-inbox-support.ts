// Shared set-up of the inbox integration files (operator-inbox*.test.ts): a Workflow with
// agent.approvals whose memory board holds one issue, an IssueRun made by hand for it (so the
// dispatcher never starts another), the board's comments changed by a Workflow patch (as
// `kubectl apply` would), and the run's requests, decisions, Events and agent output read back.
import type { IssueRun } from '../../src/api/index.js';
import { NAMESPACE, path, until, type EventView, type OperatorEnv } from './operator-harness.js';

export const APPROVER = 'alice';
export const FORCE_PUSH = '@permission kind=execute command="git push --force origin main"';

export interface BoardComment {
  author: string;
  body: string;
  author_id?: string;
  author_email?: string;
  created_at?: string;
  id?: string;
}

/** `agent.approvals` as the Workflow writes it (snake_case), with the cases' defaults. */
export function approvals(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    default: 'allow',
    rules: [
      {
        kind: 'execute',
        command: 'git push --force*',
        action: 'ask',
        reason: 'force pushes need a person',
      },
      { kind: 'execute', command: 'git status*', action: 'allow' },
      { kind: 'read', path: '/\\.env$/', action: 'deny', reason: 'secrets stay secret' },
    ],
    approvers: [APPROVER],
    timeout_ms: 120_000,
    on_timeout: 'deny',
    poll_interval_ms: 1000,
    ...extra,
  };
}

export interface InboxCase {
  /** Workflow and run name stem: the Workflow `<name>`, the run `<name>-1`. */
  name: string;
  prompt: string;
  approvals?: Record<string, unknown>;
  maxTurns?: number;
  hooks?: Record<string, string | number>;
}

const AFTER_RUN = {
  after_run: 'cat prompts.txt 2>/dev/null; echo after-run-ran',
  timeout_ms: 60_000,
};

/** The issue on the case's board: not in an active state, so only the hand-made run has it. */
const boardIssue = (name: string, comments: readonly BoardComment[]) => ({
  id: `${name}-id`,
  identifier: `${name.toUpperCase()}-1`,
  title: `Inbox case ${name}`,
  state: 'Backlog',
  comments,
});

function caseText(env: OperatorEnv, spec: InboxCase, comments: readonly BoardComment[]): string {
  return env.workflowText({
    tracker: `  active_states: [Todo]\n  issues: ${JSON.stringify([boardIssue(spec.name, comments)])}`,
    agent: `  approvals: ${JSON.stringify(spec.approvals ?? approvals())}`,
    maxTurns: spec.maxTurns ?? 1,
    hooks: spec.hooks ?? AFTER_RUN,
    prompt: spec.prompt,
  });
}

export interface StartedCase {
  run: string;
  /** Adds comments to the board issue (a Workflow patch: the board is read anew). */
  comment(...added: BoardComment[]): Promise<void>;
}

/** The case's Workflow and its run; the run starts at once. */
export async function startCase(env: OperatorEnv, spec: InboxCase): Promise<StartedCase> {
  const comments: BoardComment[] = [];
  await env.createWorkflow(spec.name, caseText(env, spec, comments));
  const run = `${spec.name}-1`;
  const issue = boardIssue(spec.name, []);
  await env.createIssueRun(run, spec.name, {
    id: issue.id,
    identifier: issue.identifier,
    title: issue.title,
  });
  return {
    run,
    async comment(...added) {
      comments.push(...added);
      await env.mergePatch(path.workflows(spec.name), {
        spec: { workflow: caseText(env, spec, comments) },
      });
    },
  };
}

export type Pending = NonNullable<NonNullable<IssueRun['status']>['inbox']>['pending'];

/** The run's first waiting request, once there is one. */
export async function pendingRequest(env: OperatorEnv, run: string, ms = 120_000) {
  return until(
    `a request of ${run} to wait in status.inbox.pending`,
    async () => (await env.getRun(run)).status?.inbox?.pending?.[0],
    ms,
  );
}

/** The run's decisions, once `count` are made. */
export async function decisions(env: OperatorEnv, run: string, count = 1, ms = 120_000) {
  return until(
    `${count} decision(s) of ${run} in status.inbox.decided`,
    async () => {
      const decided = (await env.getRun(run)).status?.inbox?.decided ?? [];
      return decided.length >= count ? decided : undefined;
    },
    ms,
  );
}

/** The reasons of the run's Events, once every one of `wanted` is among them. */
export async function eventsOf(env: OperatorEnv, run: string, wanted: readonly string[]) {
  return until(`Events ${wanted.join(', ')} on ${run}`, async () => {
    const list = await env.admin.request<{ items: EventView[] }>({ path: path.events });
    const mine = list.items.filter((event) => event.regarding.name === run);
    const reasons = mine.map((event) => event.reason);
    return wanted.every((reason) => reasons.includes(reason)) ? mine : undefined;
  });
}

/** What the agent said (its session notifications are in the Pod's log, JSON lines). */
export async function agentLog(env: OperatorEnv, run: string): Promise<string> {
  const pods = await env.runPodNames(run);
  const logs = await Promise.all(
    pods.map((pod) => env.kubectl('logs', pod, '-n', NAMESPACE, '-c', 'agent').catch(String)),
  );
  return logs.join('\n');
}

/** The output of the run's after_run hook (it prints prompts.txt, the recorded prompts). */
export const afterRunOutput = (run: IssueRun): string =>
  run.status?.hooks?.find((hook) => hook.name === 'after_run')?.output ?? '';
