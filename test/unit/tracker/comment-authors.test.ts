// Who wrote a comment, as each tracker's writer reads it: the inbox matches approvers against
// author (name or login), author_id and author_email, so every writer must fill in what its
// tracker gives, over the tracker's real wire format (the stand-ins).
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLinearTracker } from '../../../src/tracker/linear/index.js';
import { createLocalTracker } from '../../../src/tracker/local/index.js';
import { COMMENTS_QUERY } from '../../../src/tracker/linear/write-queries.js';
import type { TrackerComment, TrackerWriter } from '../../../src/tracker/types.js';
import { parseConfig } from '../../../src/workflow/config.js';
import { LorenzError } from '../../../src/workflow/errors.js';
import { harness } from '../../support/fakes/github-tracker.js';
import { startJiraStandIn } from '../../support/fakes/jira-server.js';
import { fixtureData } from '../../support/fakes/linear-data.js';
import { startLinearStandIn } from '../../support/fakes/linear-server.js';
import { jiraTrackerOf } from '../../support/fakes/jira-per-file.js';
import { tempDirPerSuite } from '../../support/temp-dir.js';

const writerOf = (writer: TrackerWriter | undefined): TrackerWriter => {
  if (writer === undefined) throw new Error('tracker without a writer');
  return writer;
};
const authorOf = (comment: TrackerComment | undefined) => ({
  author: comment?.author,
  author_id: comment?.author_id,
  author_email: comment?.author_email,
});

describe('comment authors: linear', () => {
  const KEY = 'lin_api_authorsKey0123456789';
  let standIn: Awaited<ReturnType<typeof startLinearStandIn>>;
  beforeAll(async () => {
    standIn = await startLinearStandIn(fixtureData(), KEY);
  });
  afterAll(() => standIn.close());
  const writer = () => {
    const { config } = parseConfig({
      tracker: { kind: 'linear', endpoint: standIn.url, project_slugs: ['alpha1'] },
    });
    return writerOf(createLinearTracker({ config: config.tracker, apiKey: KEY, env: {} }).writer);
  };

  it('the comments query asks for the user id, name and email', () => {
    expect(COMMENTS_QUERY).toMatch(/user \{ id name email \}/);
  });

  it("a person's comment and the key's own carry the user's name, id and email", async () => {
    standIn.addComment('ENG-1', { author: 'Alice Doe', body: '/approve', email: 'alice@acme.io' });
    const mine = await writer().comment('issue-1', 'Waiting for approval.');
    const listed = await writer().listComments('issue-1');
    expect(listed.map(authorOf)).toEqual([
      { author: 'Alice Doe', author_id: 'user-alice-doe', author_email: 'alice@acme.io' },
      { author: 'Me', author_id: 'user-me', author_email: 'me@example.com' },
    ]);
    expect(authorOf(mine)).toEqual(authorOf(listed[1]));
    expect(listed[0]?.body).toBe('/approve');
  });

  it('a comment without a user (an integration) has no author', async () => {
    standIn.data.comments.push({
      id: 'c-bot',
      issueId: 'issue-2',
      body: 'from a bot',
      userId: null,
      createdAt: '2026-02-01T00:00:00.000Z',
      updatedAt: '2026-02-01T00:00:00.000Z',
    });
    const [comment] = await writer().listComments('issue-2');
    expect(authorOf(comment)).toEqual({ author: null, author_id: null, author_email: null });
  });
});

describe('comment authors: github', () => {
  it('login is the author, the user id its id; no email is given', async () => {
    const h = await harness([{ number: 1, title: 'One', labels: ['lorenz:todo'] }]);
    try {
      h.standIn.addComment(1, { author: 'alice', body: '/deny too risky', authorId: 4242 });
      const writer = writerOf(h.tracker().writer);
      const mine = await writer.comment('1', 'A request.');
      const listed = await writer.listComments('1');
      expect(listed.map(authorOf)).toEqual([
        { author: 'alice', author_id: '4242', author_email: null },
        {
          author: 'octokit-fixture-user-a',
          author_id: expect.stringMatching(/^\d+$/),
          author_email: null,
        },
      ]);
      expect(authorOf(mine)).toEqual(authorOf(listed[1]));
      expect(h.standIn.violations).toEqual([]);
    } finally {
      await h.standIn.close();
    }
  });
});

describe('comment authors: jira', () => {
  const EMAIL = 'agent@acme.test';
  const TOKEN = 'ATATT3xFfGF0-authors-token';
  let standIn: Awaited<ReturnType<typeof startJiraStandIn>>;
  beforeAll(async () => {
    standIn = await startJiraStandIn(EMAIL, TOKEN);
  });
  afterAll(() => standIn.close());

  it('displayName, accountId and emailAddress when the profile shows it', async () => {
    const issue = standIn.issues[0]?.key ?? '';
    standIn.addComment(issue, { author: 'Bob Ray', body: '/approve always', email: 'bob@acme.io' });
    standIn.addComment(issue, { author: 'Hidden', body: 'no email', accountId: '712020:hid' });
    const writer = writerOf(jiraTrackerOf(standIn, EMAIL, TOKEN).writer);
    await writer.comment(issue, 'A request.');
    const listed = await writer.listComments(issue);
    expect(listed.map(authorOf)).toEqual([
      { author: 'Bob Ray', author_id: '712020:bobray', author_email: 'bob@acme.io' },
      { author: 'Hidden', author_id: '712020:hid', author_email: null },
      { author: 'Agent Bot', author_id: '5b10a2844c20165700ede21g', author_email: null },
    ]);
    expect(listed.map((comment) => comment.body)).toEqual([
      '/approve always',
      'no email',
      'A request.',
    ]);
  });
});

describe('comment authors: local board', () => {
  const root = tempDirPerSuite('local-authors-');
  beforeAll(async () => {
    await fs.writeFile(
      join(root(), 'BOARD-1.md'),
      [
        '---',
        'status: Todo',
        '---',
        '# One',
        '',
        '<!-- lorenz:comments -->',
        '## Comments',
        '',
        '- 2026-03-01T10:00:00.000Z agent: I need to push.',
        '- 2026-03-01T10:05:00.000Z alice@acme.io: /approve',
        '- 2026-03-01T10:06:00.000Z bob: a reply',
        '',
      ].join('\n'),
    );
  });
  const writer = () => writerOf(createLocalTracker({ directory: root() }).writer);

  it("a line names its author; an email is also the author's email", async () => {
    const listed = await writer().listComments('BOARD-1');
    expect(listed.map(authorOf)).toEqual([
      { author: 'agent', author_id: null, author_email: null },
      { author: 'alice@acme.io', author_id: null, author_email: 'alice@acme.io' },
      { author: 'bob', author_id: null, author_email: null },
    ]);
    expect(listed.map((comment) => comment.id)).toEqual(['1', '2', '3']);
  });

  it("the agent edits its own comments, never a person's", async () => {
    const error = await writer()
      .updateComment('BOARD-1', '2', '/approve always')
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(error).toBeInstanceOf(LorenzError);
    expect((error as LorenzError).message).toMatch(/comment 2 of BOARD-1 is not the agent's/);
    expect((await writer().listComments('BOARD-1'))[1]?.body).toBe('/approve');
    const edited = await writer().updateComment('BOARD-1', '1', 'I pushed.');
    expect(edited).toMatchObject({ id: '1', body: 'I pushed.', author: 'agent' });
  });
});
