// A run's issue is normalized once per cached object: the same spec.issue gives the same
// answer without a second parse, a changed one is parsed again, a bad one fails as before.
import { describe, expect, it } from 'vitest';
import { runIssue } from '../../../../src/controller/shared/run-issue.js';
import { issueRun } from '../../../support/fakes/objects.js';

describe('runIssue', () => {
  it('answers the same normalized issue for the same cached object', () => {
    const run = issueRun();
    const first = runIssue(run);
    expect(first.identifier).toBe(run.spec.issue.identifier);
    expect(runIssue(run)).toBe(first);
    // The same object under another run object (a status write spreads the run): still one parse.
    expect(runIssue({ ...run, status: { phase: 'Running' } })).toBe(first);
  });

  it('parses a changed issue again', () => {
    const run = issueRun();
    const before = runIssue(run);
    const changed = {
      ...run,
      spec: { ...run.spec, issue: { ...run.spec.issue, labels: [' Bug '] } },
    };
    const after = runIssue(changed);
    expect(after).not.toBe(before);
    expect(after.labels).toEqual(['bug']);
  });

  it('fails on a bad issue as normalizeIssue does, naming spec.issue, and remembers nothing', () => {
    const run = issueRun();
    const bad = { ...run, spec: { ...run.spec, issue: { ...run.spec.issue, identifier: '' } } };
    expect(() => runIssue(bad)).toThrow(/^spec\.issue: /);
    expect(() => runIssue(bad)).toThrow(/^spec\.issue: /);
  });
});
