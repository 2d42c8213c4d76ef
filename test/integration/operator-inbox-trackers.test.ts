// The agent's inbox over the Linear and GitHub stand-ins (comments through their real wire
// formats, every request checked against the published schemas): the request is posted on
// the issue, a person's `/approve` there lets the agent go on. Then, on the memory board, a
// controller restart while a request waits loses nothing: the request is on the IssueRun,
// the reply on the issue.
import { describe, expect, it } from 'vitest';
import { INBOX_COMMENT_MARKER, InboxReasons } from '../../src/api/inbox.js';
import {
  NAMESPACE,
  freePort,
  gatewayOptions,
  until,
  useGithubStandIn,
  useLinearStandIn,
  useOperatorEnv,
} from './operator-harness.js';
import {
  APPROVER,
  FORCE_PUSH,
  agentLog,
  approvals,
  eventsOf,
  pendingRequest,
  startCase,
} from './operator-inbox-support.js';

const LINEAR_KEY = 'lin_api_Inb0xKey7rTq2LmW9xZs4c';
const RUN_MS = 150_000;
/** A case: its run, and the waits for its request and Events. */
const CASE_MS = 240_000;
const PROMPT = `${FORCE_PUSH}\n@write done.txt ok`;

describe(
  'the inbox on hosted trackers, and across a controller restart',
  { timeout: CASE_MS },
  () => {
    const linear = useLinearStandIn(LINEAR_KEY);
    const github = useGithubStandIn();
    let port: number;
    const env = useOperatorEnv(async () => {
      port = await freePort();
      return gatewayOptions(port);
    });

    /** A Workflow on a hosted tracker whose polls dispatch nothing (no issue is in `Ready`). */
    async function hostedWorkflow(
      name: string,
      kind: 'linear' | 'github',
      tracker: string,
      key: string,
      approvers: string[],
    ) {
      await env.createSecret(name, { api_key: key });
      await env.createWorkflow(
        name,
        {
          trackerKind: kind,
          tracker: `${tracker}\n  active_states: [Ready]`,
          agent: `  approvals: ${JSON.stringify(approvals({ approvers }))}`,
          pollingMs: 2000,
          prompt: PROMPT,
        },
        { trackerSecretRef: { name } },
      );
    }

    it.concurrent('Linear: the request is a comment; /approve by an approver (email)', async () => {
      await hostedWorkflow(
        'inl',
        'linear',
        `  endpoint: ${linear.url}\n  project_slug: alpha1`,
        LINEAR_KEY,
        ['alice@example.com'],
      );
      await env.createIssueRun('inl-1', 'inl', {
        id: 'issue-1',
        identifier: 'ENG-1',
        title: 'Issue 1',
      });
      const request = await pendingRequest(env, 'inl-1');
      const onIssue = () => linear.data.comments.filter((comment) => comment.issueId === 'issue-1');
      await until('the request comment on the Linear issue', async () =>
        onIssue().some((comment) => comment.body.startsWith(INBOX_COMMENT_MARKER))
          ? true
          : undefined,
      );
      linear.addComment('ENG-1', { author: 'Alice', body: '/approve' });
      const run = await env.finished('inl-1', RUN_MS);
      expect(run.status?.phase).toBe('Succeeded');
      expect(run.status?.inbox?.decided?.[0]).toMatchObject({
        requestId: request.id,
        verdict: 'approve',
      });
      expect(await agentLog(env, 'inl-1')).toContain('permission granted (allow)');
      await eventsOf(env, 'inl-1', [InboxReasons.ApprovalRequested, InboxReasons.ApprovalGranted]);
      expect(await env.kubectl('get', 'pods', '-n', NAMESPACE, '-o', 'json')).not.toContain(
        LINEAR_KEY,
      );
    });

    it.concurrent('GitHub: a non-approver is told once; /approve by login goes on', async () => {
      await hostedWorkflow(
        'ing',
        'github',
        `  endpoint: ${github.url}\n  repository: ${github.repository}`,
        github.token,
        [APPROVER],
      );
      await env.createIssueRun('ing-1', 'ing', {
        id: '7',
        identifier: 'acme/app#7',
        title: 'Tidy',
      });
      await pendingRequest(env, 'ing-1');
      const inboxComments = () =>
        github.comments.filter((comment) => comment.body.startsWith(INBOX_COMMENT_MARKER));
      await until('the request comment on the GitHub issue', async () =>
        inboxComments().length === 1 ? true : undefined,
      );
      // GitHub's times are whole seconds: a reply within the second the request was asked in
      // would read as older than the request, and be left alone, as the inbox means it to.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      github.addComment(7, { author: 'mallory', body: '/approve' });
      await until('one reply to the non-approver', async () =>
        inboxComments().length === 2 ? true : undefined,
      );
      github.addComment(7, { author: 'mallory', body: '/approve please' });
      github.addComment(7, { author: APPROVER, body: '/approve' });
      const run = await env.finished('ing-1', RUN_MS);
      expect(run.status?.phase).toBe('Succeeded');
      expect(run.status?.inbox?.decided?.[0]).toMatchObject({ verdict: 'approve', by: APPROVER });
      // The request, one notice to mallory (not two), and the reply saying it was approved.
      await until('the approval reply', async () =>
        inboxComments().length === 3 ? true : undefined,
      );
      expect(github.violations).toEqual([]);
    });

    it('a controller restart while a request waits: /approve posted meanwhile is read', async () => {
      const c = await startCase(env, { name: 'restart', prompt: PROMPT });
      await pendingRequest(env, c.run);
      await env.controller?.stop();
      await c.comment({ author: APPROVER, body: '/approve' });
      await env.startController(gatewayOptions(port));
      const run = await env.finished(c.run, RUN_MS);
      expect(run.status?.phase).toBe('Succeeded');
      expect(await agentLog(env, c.run)).toContain('permission granted (allow)');
      expect(run.status?.inbox?.decided?.[0]).toMatchObject({ verdict: 'approve', via: 'comment' });
    });
  },
);
