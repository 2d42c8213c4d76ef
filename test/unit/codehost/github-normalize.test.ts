import { describe, expect, it } from 'vitest';
import {
  OUTPUT_TAIL_CHARS,
  byCreation,
  combineReviews,
  readCheckRun,
  readCommitStatus,
  readPullRequest,
  tail,
} from '../../../src/codehost/github-normalize.js';
import type { Review } from '../../../src/codehost/types.js';
import { eachNamedCase } from '../../support/cases.js';

const review = (id: number, author: string | null, state: Review['state']): Review => ({
  id: String(id),
  author,
  state,
  body: '',
  submittedAt: null,
  commitSha: null,
});

describe('combineReviews', () => {
  eachNamedCase('%s → %s', combineReviews, [
    ['nothing', [], 'none'],
    [
      'two reviewers without an account, one asking for changes',
      [review(1, null, 'approved'), review(2, null, 'changes_requested')],
      'changes_requested',
    ],
    [
      'one reviewer without an account approving twice',
      [review(1, null, 'approved'), review(2, null, 'approved')],
      'approved',
    ],
    [
      'a later comment by the reviewer who approved',
      [review(1, 'ana', 'approved'), review(2, 'ana', 'commented')],
      'commented',
    ],
  ]);
});

describe('readers', () => {
  const pull = {
    number: 3,
    html_url: 'https://github.com/a/b/pull/3',
    title: 'T',
    state: 'closed',
    draft: false,
    head: { ref: 'x', sha: 'f'.repeat(40) },
    base: { ref: 'main' },
  };

  it.each([
    ['closed, not merged', { ...pull, merged_at: null }, 'closed'],
    [
      'merged (the list form: merged_at only)',
      { ...pull, merged_at: '2026-01-01T00:00:00Z' },
      'merged',
    ],
    [
      'merged (the full form)',
      { ...pull, merged: true, merged_at: '2026-01-01T00:00:00Z' },
      'merged',
    ],
    ['open', { ...pull, state: 'open', merged_at: null }, 'open'],
  ])('reads a pull request that is %s', (_name, value, state) => {
    expect(readPullRequest(value)?.state).toBe(state);
  });

  it.each([
    ['no head', { ...pull, head: null }],
    ['an unknown state', { ...pull, state: 'locked' }],
    ['a string number', { ...pull, number: '3' }],
    ['not an object', 'pull'],
  ])('refuses a pull request with %s', (_name, value) => {
    expect(readPullRequest(value)).toBeNull();
  });

  it.each([
    ['waiting', 'queued'],
    ['requested', 'queued'],
    ['pending', 'queued'],
    ['queued', 'queued'],
    ['in_progress', 'in_progress'],
  ])('reads a check run in status %s as %s, with no conclusion yet', (status, read) => {
    const run = readCheckRun({ name: 'ci', status, conclusion: 'success', output: {} });
    expect(run).toMatchObject({ status: read, conclusion: null, outputTail: null });
  });

  it('refuses a check run or a status it cannot name', () => {
    expect(readCheckRun({ status: 'completed' })).toBeNull();
    expect(readCheckRun({ name: 'ci', status: 'exploded' })).toBeNull();
    expect(readCommitStatus({ context: 'ci', state: 'weird' })).toBeNull();
    expect(readCommitStatus({ state: 'success' })).toBeNull();
  });

  it('keeps the end of a long output, and nothing for blank output', () => {
    const long = `${'a'.repeat(5000)}END`;
    expect(tail(long)).toHaveLength(OUTPUT_TAIL_CHARS);
    expect(tail(long)?.endsWith('END')).toBe(true);
    expect(tail('  \n')).toBeNull();
    expect(tail(null)).toBeNull();
  });

  it('orders comments oldest first, those without a time last', () => {
    const at = (id: string, createdAt: string | null) => ({
      id,
      path: null,
      line: null,
      author: null,
      body: id,
      createdAt,
    });
    const sorted = byCreation([
      at('none', null),
      at('late', '2026-01-02T00:00:00Z'),
      at('early', '2026-01-01T00:00:00Z'),
    ]);
    expect(sorted.map((comment) => comment.id)).toEqual(['early', 'late', 'none']);
  });
});
