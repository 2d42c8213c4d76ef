import { describe, expect, it } from 'vitest';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import { LorenzError } from '../../../src/workflow/errors.js';

describe('normalizeIssue', () => {
  it('fills missing keys with null, lower-cases labels, defaults assigned_to_worker to true', () => {
    const issue = normalizeIssue({ identifier: 'ENG-1', title: 'Fix', labels: [' Ensemble:3 '] });
    expect(issue.description).toBeNull();
    expect(issue.blocked_by).toEqual([]);
    expect(issue.labels).toEqual(['ensemble:3']);
    expect(issue.assigned_to_worker).toBe(true);
  });

  it('keeps an explicit assigned_to_worker false', () => {
    expect(
      normalizeIssue({ identifier: 'A', title: 't', assigned_to_worker: false }).assigned_to_worker,
    ).toBe(false);
  });

  it('names the source and the key of a bad issue in plain words', () => {
    expect(() => normalizeIssue({ identifier: 'A', title: 3 }, 'issue file i.yaml')).toThrow(
      'issue file i.yaml: key "title" must be a string, not a whole number',
    );
    expect(() => normalizeIssue({ title: 'x' })).toThrow(LorenzError);
  });

  it.each([
    [{ title: 't' }, 'key "identifier" is required'],
    [{ identifier: 'A' }, 'key "title" is required'],
    [{ identifier: null, title: 't' }, 'key "identifier" must be a string, not null'],
    [{ identifier: '', title: 't' }, 'key "identifier" must not be empty'],
    [{ identifier: ['A'], title: 't' }, 'key "identifier" must be a string, not a list'],
    [
      { identifier: 'A', title: 't', priority: 1.5 },
      'key "priority" must be a whole number, not a number',
    ],
    [{ identifier: 'A', title: 't', labels: 'x' }, 'key "labels" must be a list, not a string'],
    [{ identifier: 'A', title: 't', labels: [{}] }, 'key "labels[0]" must be a string, not a map'],
    [
      { identifier: 'A', title: 't', blocked_by: [{ id: 3 }] },
      'key "blocked_by[0].id" must be a string, not a whole number',
    ],
    [
      { identifier: 'A', title: 't', assigned_to_worker: 'yes' },
      'key "assigned_to_worker" must be true or false, not a string',
    ],
  ])('%j: "%s", not zod\'s own text', (raw, message) => {
    expect(() => normalizeIssue(raw, 'issue file F')).toThrow(
      expect.objectContaining({ code: 'invalid_issue', message: `issue file F: ${message}` }),
    );
  });
});
