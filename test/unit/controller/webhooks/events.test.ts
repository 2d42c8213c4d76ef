import { describe, expect, it } from 'vitest';
import { wakesOf } from '../../../../src/controller/webhooks/events.js';
import type { WebhookHost } from '../../../../src/controller/webhooks/verify.js';

const route = { namespace: 'team', workflow: 'wf' };
const poll = { kind: 'poll', ...route };
const review = (branch?: string) => ({ kind: 'review', ...route, ...(branch ? { branch } : {}) });

describe('wakesOf', () => {
  const cases: {
    host: WebhookHost;
    headers?: Record<string, string>;
    body?: unknown;
    expected: unknown[];
  }[] = [
    { host: 'github', headers: { 'x-github-event': 'issues' }, expected: [poll] },
    { host: 'github', headers: { 'x-github-event': 'issue_comment' }, expected: [poll] },
    {
      host: 'github',
      headers: { 'x-github-event': 'pull_request' },
      body: { pull_request: { head: { ref: 'lorenz/eng-42' } } },
      expected: [review('lorenz/eng-42')],
    },
    {
      host: 'github',
      headers: { 'x-github-event': 'pull_request_review' },
      body: { pull_request: { head: { ref: 'lorenz/eng-42' } } },
      expected: [review('lorenz/eng-42')],
    },
    {
      host: 'github',
      headers: { 'x-github-event': 'pull_request_review_comment' },
      body: { pull_request: { head: { ref: 'refs/heads/lorenz/eng-7' } } },
      expected: [review('lorenz/eng-7')],
    },
    {
      host: 'github',
      headers: { 'x-github-event': 'check_run' },
      body: { check_run: { check_suite: { head_branch: 'lorenz/eng-1' } } },
      expected: [review('lorenz/eng-1')],
    },
    {
      host: 'github',
      headers: { 'x-github-event': 'check_suite' },
      body: { check_suite: { head_branch: 'lorenz/eng-2' } },
      expected: [review('lorenz/eng-2')],
    },
    { host: 'github', headers: { 'x-github-event': 'status' }, body: {}, expected: [review()] },
    {
      host: 'github',
      headers: { 'x-github-event': 'pull_request' },
      body: { pull_request: { head: { ref: 'bad branch; rm -rf /' } } },
      expected: [review()],
    },
    {
      host: 'github',
      headers: { 'x-github-event': 'pull_request' },
      body: { pull_request: { head: { ref: 42 } } },
      expected: [review()],
    },
    { host: 'github', headers: { 'x-github-event': 'ping' }, expected: [] },
    { host: 'github', headers: { 'x-github-event': 'push' }, expected: [] },
    { host: 'github', expected: [] },
    { host: 'gitlab', headers: { 'x-gitlab-event': 'Issue Hook' }, expected: [poll] },
    {
      host: 'gitlab',
      headers: { 'x-gitlab-event': 'Merge Request Hook' },
      body: { object_attributes: { source_branch: 'lorenz/eng-3' } },
      expected: [review('lorenz/eng-3')],
    },
    {
      host: 'gitlab',
      headers: { 'x-gitlab-event': 'Note Hook' },
      body: {
        object_attributes: { noteable_type: 'MergeRequest' },
        merge_request: { source_branch: 'lorenz/eng-4' },
      },
      expected: [review('lorenz/eng-4')],
    },
    {
      host: 'gitlab',
      headers: { 'x-gitlab-event': 'Note Hook' },
      body: { object_attributes: { noteable_type: 'Issue' } },
      expected: [poll],
    },
    {
      host: 'gitlab',
      headers: { 'x-gitlab-event': 'Pipeline Hook' },
      body: { object_attributes: { ref: 'lorenz/eng-5' } },
      expected: [review('lorenz/eng-5')],
    },
    {
      host: 'gitlab',
      headers: { 'x-gitlab-event': 'Job Hook' },
      body: { ref: 'lorenz/eng-6' },
      expected: [review('lorenz/eng-6')],
    },
    { host: 'gitlab', headers: { 'x-gitlab-event': 'Push Hook' }, expected: [] },
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
