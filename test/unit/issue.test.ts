import { describe, expect, it } from 'vitest';
import { normalizeIssue } from '../../src/workflow/issue.js';
import { LorenzError } from '../../src/workflow/errors.js';

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

  it('names the source and key path of a bad issue', () => {
    expect(() => normalizeIssue({ identifier: 'A', title: 3 }, 'issue.yaml')).toThrow(
      /^issue\.yaml\.title: /,
    );
    expect(() => normalizeIssue({ title: 'x' })).toThrow(LorenzError);
  });
});
