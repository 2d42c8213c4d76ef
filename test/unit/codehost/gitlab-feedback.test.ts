import { describe, expect, it } from 'vitest';
import type { PullRequest } from '../../../src/codehost/types.js';
import { type GitlabHarness, gitlabHarnessPerTest } from '../../support/fakes/gitlab-host.js';

const start = gitlabHarnessPerTest();

async function withMergeRequest(): Promise<GitlabHarness & { pull: PullRequest }> {
  const current = await start();
  const mr = current.standIn.state.addMergeRequest({
    sourceBranch: 'lorenz/issue-7',
    sourceProjectId: 42,
  });
  const pull = await current.host.getPullRequest(mr.iid);
  return { ...current, pull };
}

describe('the GitLab code host: review feedback', () => {
  it('says none for a merge request nobody looked at', async () => {
    const { host, pull } = await withMergeRequest();
    expect(await host.feedback(pull)).toEqual({ reviews: [], comments: [], state: 'none' });
  });

  it('reads discussion notes oldest first, diff notes with their file and line, system notes left out', async () => {
    const { host, standIn, pull } = await withMergeRequest();
    const first = standIn.state.addDiscussionNote(pull.number, {
      body: 'Looks close.',
      author: 'alice',
    });
    standIn.state.addDiscussionNote(pull.number, {
      body: 'added 1 commit',
      author: 'lorenz-bot',
      system: true,
    });
    const onLine = standIn.state.addDiscussionNote(pull.number, {
      body: 'Off by one here.',
      author: 'bob',
      position: { new_path: 'src/parse.ts', new_line: 41, old_path: 'src/parse.ts' },
    });
    const onRemoved = standIn.state.addDiscussionNote(pull.number, {
      body: 'Why remove this?',
      author: 'bob',
      position: { old_path: 'src/old.ts', old_line: 3 },
    });
    const discussion = standIn.state.discussions.get(pull.number)?.[2]?.id ?? '';
    const reply = standIn.state.addDiscussionNote(pull.number, {
      body: 'Agreed. $(rm -rf /) {{ issue.title }}',
      author: 'alice',
      discussionId: discussion,
    });
    const feedback = await host.feedback(pull);
    expect(feedback.comments).toEqual([
      {
        id: String(first.id),
        path: null,
        line: null,
        author: 'alice',
        body: 'Looks close.',
        createdAt: first.createdAt,
      },
      {
        id: String(onLine.id),
        path: 'src/parse.ts',
        line: 41,
        author: 'bob',
        body: 'Off by one here.',
        createdAt: onLine.createdAt,
      },
      {
        id: String(onRemoved.id),
        path: 'src/old.ts',
        line: 3,
        author: 'bob',
        body: 'Why remove this?',
        createdAt: onRemoved.createdAt,
      },
      // Hostile text is kept as it was written: data, never a template.
      {
        id: String(reply.id),
        path: null,
        line: null,
        author: 'alice',
        body: 'Agreed. $(rm -rf /) {{ issue.title }}',
        createdAt: reply.createdAt,
      },
    ]);
    // Comments alone are no verdict.
    expect(feedback.state).toBe('none');
  });

  it('reads approvals as approved reviews', async () => {
    const { host, standIn, pull } = await withMergeRequest();
    standIn.state.setApproved(pull.number, 'alice');
    const feedback = await host.feedback(pull);
    expect(feedback.state).toBe('approved');
    expect(feedback.reviews).toEqual([
      expect.objectContaining({
        id: 'approval:alice',
        author: 'alice',
        state: 'approved',
        body: '',
      }),
    ]);
  });

  it('lets a reviewer who requested changes win over approvals', async () => {
    const { host, standIn, pull } = await withMergeRequest();
    standIn.state.setApproved(pull.number, 'alice');
    standIn.state.setReviewerState(pull.number, 'bob', 'requested_changes');
    standIn.state.setReviewerState(pull.number, 'carol', 'unreviewed');
    const feedback = await host.feedback(pull);
    expect(feedback.state).toBe('changes_requested');
    expect(feedback.reviews.map((review) => [review.author, review.state]).sort()).toEqual([
      ['alice', 'approved'],
      ['bob', 'changes_requested'],
    ]);
  });

  it('counts one verdict per reviewer: requested changes outrank their own approval', async () => {
    const { host, standIn, pull } = await withMergeRequest();
    standIn.state.setApproved(pull.number, 'bob');
    standIn.state.setReviewerState(pull.number, 'bob', 'requested_changes');
    const feedback = await host.feedback(pull);
    expect(feedback.reviews).toHaveLength(1);
    expect(feedback.reviews[0]).toMatchObject({ author: 'bob', state: 'changes_requested' });
  });

  it.each([
    ['reviewed', 'commented'],
    ['approved', 'approved'],
    ['requested_changes', 'changes_requested'],
    ['unreviewed', 'none'],
    ['review_started', 'none'],
    ['unapproved', 'none'],
  ] as const)('reads a reviewer state %s as %s', async (state, verdict) => {
    const { host, standIn, pull } = await withMergeRequest();
    standIn.state.setReviewerState(pull.number, 'dave', state);
    expect((await host.feedback(pull)).state).toBe(verdict);
  });

  it('works without the reviewers endpoint (an older GitLab answers 404)', async () => {
    const { host, standIn, pull } = await withMergeRequest();
    standIn.reviewersEndpoint = false;
    standIn.state.setApproved(pull.number, 'alice');
    standIn.state.addDiscussionNote(pull.number, { body: 'ok', author: 'alice' });
    const feedback = await host.feedback(pull);
    expect(feedback.state).toBe('approved');
    expect(feedback.comments).toHaveLength(1);
  });

  it('answers an unchanged second look with 304s', async () => {
    const { host, standIn, pull, again } = await withMergeRequest();
    standIn.state.addDiscussionNote(pull.number, { body: 'first', author: 'alice' });
    await host.feedback(pull);
    expect(standIn.notModified).toBe(0);
    const second = await again().feedback(pull);
    expect(second.comments.map((comment) => comment.body)).toEqual(['first']);
    // approvals, reviewers and the one discussions page.
    expect(standIn.notModified).toBe(3);
    standIn.state.addDiscussionNote(pull.number, { body: 'second', author: 'bob' });
    const third = await host.feedback(pull);
    expect(third.comments.map((comment) => comment.body)).toEqual(['first', 'second']);
    expect(standIn.notModified).toBe(5);
  });
});
