import { describe, expect, it } from 'vitest';
import { authorOf, isApprover } from '../../../../src/controller/inbox/approvers.js';
import type { TrackerComment } from '../../../../src/tracker/types.js';

const comment = (author: Partial<TrackerComment>): TrackerComment => ({
  id: 'c1',
  body: '/approve',
  author: null,
  created_at: null,
  updated_at: null,
  ...author,
});

describe('isApprover', () => {
  it.each<[string, readonly string[], Partial<TrackerComment>, boolean]>([
    ['an empty list lets anyone in', [], { author: 'mallory' }, true],
    ['an empty list lets an unknown author in', [], {}, true],
    ['by login', ['alice'], { author: 'alice' }, true],
    ['by login, case-insensitive and trimmed', ['  Alice '], { author: 'ALICE' }, true],
    ['by id', ['u-42'], { author: 'someone else', author_id: 'U-42' }, true],
    ['by email', ['alice@example.com'], { author_email: 'Alice@Example.com ' }, true],
    ['another author', ['alice'], { author: 'mallory' }, false],
    ['no author fields', ['alice'], {}, false],
    ['null fields', ['alice'], { author: null, author_id: null, author_email: null }, false],
    ['a blank entry matches no blank author', ['', ' '], { author: '', author_id: ' ' }, false],
    ['a part of a login is not the login', ['alice'], { author: 'alice2' }, false],
    ['one of several entries', ['bob', 'alice'], { author: 'alice' }, true],
  ])('%s', (_case, approvers, author, expected) => {
    expect(isApprover(approvers, comment(author))).toBe(expected);
  });
});

describe('authorOf', () => {
  it.each<[Partial<TrackerComment>, string]>([
    [{ author: 'alice', author_email: 'a@x', author_id: '1' }, 'alice'],
    [{ author: '  ', author_email: 'a@x', author_id: '1' }, 'a@x'],
    [{ author: null, author_email: null, author_id: '1' }, '1'],
    [{ author: ' alice ' }, 'alice'],
    [{}, 'someone'],
  ])('%j → %s', (author, expected) => {
    expect(authorOf(comment(author))).toBe(expected);
  });
});
