import { describe, expect, it } from 'vitest';
import { wakesOf } from '../../../../src/controller/webhooks/events.js';
import type { WebhookHost } from '../../../../src/controller/webhooks/verify.js';

const route = { namespace: 'team', workflow: 'wf' };
const poll = { kind: 'poll', ...route };
const review = (branch?: string) => ({ kind: 'review', ...route, ...(branch ? { branch } : {}) });

/** One delivery and the wakes it should give. */
interface Case {
  host: WebhookHost;
  headers?: Record<string, string>;
  body?: unknown;
  expected: unknown[];
}
/** A delivery of a code host that names its event in a header (GitHub's, GitLab's). */
const delivery =
  (host: 'github' | 'gitlab', header: string) =>
  (event: string, expected: unknown[], body?: unknown): Case => ({
    host,
    headers: { [header]: event },
    ...(body === undefined ? {} : { body }),
    expected,
  });
const github = delivery('github', 'x-github-event');
const gitlab = delivery('gitlab', 'x-gitlab-event');
/** A GitHub pull request event's body, naming its head branch. */
const pullHead = (ref: unknown) => ({ pull_request: { head: { ref } } });

describe('wakesOf', () => {
  const cases: Case[] = [
    github('issues', [poll]),
    github('issue_comment', [poll]),
    github('pull_request', [review('lorenz/eng-42')], pullHead('lorenz/eng-42')),
    github('pull_request_review', [review('lorenz/eng-42')], pullHead('lorenz/eng-42')),
    github(
      'pull_request_review_comment',
      [review('lorenz/eng-7')],
      pullHead('refs/heads/lorenz/eng-7'),
    ),
    github('check_run', [review('lorenz/eng-1')], {
      check_run: { check_suite: { head_branch: 'lorenz/eng-1' } },
    }),
    github('check_suite', [review('lorenz/eng-2')], {
      check_suite: { head_branch: 'lorenz/eng-2' },
    }),
    github('status', [review()], {}),
    github('pull_request', [review()], pullHead('bad branch; rm -rf /')),
    github('pull_request', [review()], pullHead(42)),
    github('ping', []),
    github('push', []),
    { host: 'github', expected: [] },
    gitlab('Issue Hook', [poll]),
    gitlab('Merge Request Hook', [review('lorenz/eng-3')], {
      object_attributes: { source_branch: 'lorenz/eng-3' },
    }),
    gitlab('Note Hook', [review('lorenz/eng-4')], {
      object_attributes: { noteable_type: 'MergeRequest' },
      merge_request: { source_branch: 'lorenz/eng-4' },
    }),
    gitlab('Note Hook', [poll], { object_attributes: { noteable_type: 'Issue' } }),
    gitlab('Pipeline Hook', [review('lorenz/eng-5')], {
      object_attributes: { ref: 'lorenz/eng-5' },
    }),
    gitlab('Job Hook', [review('lorenz/eng-6')], { ref: 'lorenz/eng-6' }),
    gitlab('Push Hook', []),
    { host: 'linear', body: { type: 'Issue', action: 'update' }, expected: [poll] },
    { host: 'linear', body: { type: 'Comment', action: 'create' }, expected: [poll] },
    { host: 'linear', body: { type: 'Project' }, expected: [] },
    { host: 'linear', body: ['Issue'], expected: [] },
    { host: 'jira', body: { webhookEvent: 'jira:issue_updated' }, expected: [poll] },
    { host: 'jira', body: { webhookEvent: 'jira:issue_created' }, expected: [poll] },
    { host: 'jira', body: { webhookEvent: 'comment_created' }, expected: [poll] },
    { host: 'jira', body: { webhookEvent: 'sprint_started' }, expected: [] },
    { host: 'jira', body: null, expected: [] },
  ];
  it.each(cases)('$host $headers $body', ({ host, headers = {}, body = {}, expected }) => {
    expect(wakesOf(host, headers, body, route)).toEqual(expected);
  });

  it('names the Workflow of the route, whatever the body says', () => {
    const body = { type: 'Issue', namespace: 'other', workflow: 'other' };
    expect(wakesOf('linear', {}, body, route)).toEqual([poll]);
  });
});
