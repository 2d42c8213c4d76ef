// The inbox's posts: each marked with its key and found on the issue instead of posted twice,
// and what they became recorded (a request comment's id, a refusal with one Event, a refused
// reply as the inbox's problem), never thrown.
import { describe, expect, it } from 'vitest';
import type { InboxPending, InboxStatus } from '../../../../src/api/index.js';
import {
  postAll,
  postMark,
  recordPosts,
  type PostResult,
} from '../../../../src/controller/inbox/act.js';
import type { InboxPost } from '../../../../src/controller/inbox/decide.js';
import type { TrackerComment } from '../../../../src/tracker/types.js';
import { FakeTrackerWriter } from '../../../support/fakes/code-host.js';
import { T0, at, issueRun, permissionRequest } from '../../../support/fakes/objects.js';

const request = permissionRequest();
// The post that asks `request` on the issue, keyed as the inbox keys it.
const ask: InboxPost = {
  key: `request:${request.id}`,
  kind: 'request',
  body: 'ask',
  requestId: request.id,
};
const answer: InboxPost = { key: 'reply:decided:a1-s0-1', kind: 'approved', body: 'ok' };

describe('posting', () => {
  it('marks each post with its key, and finds one already on the issue', async () => {
    const tracker = new FakeTrackerWriter();
    const results = await postAll(tracker, 'issue-1', [ask], []);
    expect(tracker.writes).toEqual([`comment issue-1: ask\n\n${postMark(ask.key)}`]);
    expect(results[0]?.comment?.id).toBe('1');
    const again = await postAll(tracker, 'issue-1', [ask, answer], [...tracker.comments]);
    expect(again.map((r) => r.comment?.id)).toEqual(['1', '2']);
    expect(tracker.writes).toHaveLength(2);
  });

  it('a refusal, or no writer, is a result, never a throw', async () => {
    const tracker = new FakeTrackerWriter();
    tracker.fail = true;
    expect((await postAll(tracker, 'i', [ask], null))[0]?.error).toBe('tracker down');
    expect((await postAll(undefined, 'i', [ask], null))[0]?.error).toMatch(/cannot write comments/);
  });
});

describe('recording the posts', () => {
  const run = issueRun();
  const inbox: InboxStatus = { pending: [request] };
  const posted: TrackerComment = {
    id: '42',
    body: '',
    author: 'bot',
    created_at: null,
    updated_at: null,
  };

  it.each<[string, InboxStatus, PostResult[], Partial<InboxPending>, string[]]>([
    [
      'posted: its comment id',
      inbox,
      [{ post: ask, comment: posted }],
      { commentId: '42', commentedAt: at(0) },
      [],
    ],
    [
      'refused: why, with one Event',
      inbox,
      [{ post: ask, error: 'HTTP 403' }],
      { commentError: 'HTTP 403' },
      ['TrackerCommentFailed'],
    ],
    [
      'refused again: no second Event',
      { pending: [{ ...request, commentError: 'HTTP 403' }] },
      [{ post: ask, error: 'HTTP 500' }],
      { commentError: 'HTTP 500' },
      [],
    ],
    [
      'posted after a refusal: the refusal is gone',
      { pending: [{ ...request, commentError: 'HTTP 403' }] },
      [{ post: ask, comment: posted }],
      { commentId: '42' },
      [],
    ],
  ])('%s', (_name, before, results, expected, events) => {
    const recorded = recordPosts(run, before, results, T0);
    expect(recorded.inbox.pending?.[0]).toMatchObject(expected);
    expect(recorded.events.map((e) => e.reason)).toEqual(events);
    if (results[0]?.comment) expect(recorded.inbox.pending?.[0]).not.toHaveProperty('commentError');
  });

  it('a refused reply becomes the inbox problem', () => {
    const recorded = recordPosts(run, inbox, [{ post: answer, error: 'HTTP 429' }], T0);
    expect(recorded.inbox).toMatchObject({
      reason: 'TrackerCommentFailed',
      message: 'the tracker refused a reply on the issue: HTTP 429',
    });
    expect(recorded.inbox.pending).toEqual([request]);
  });
});
