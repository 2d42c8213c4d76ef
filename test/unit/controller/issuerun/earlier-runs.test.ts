// What tells a run's first pass that an earlier IssueRun of its name may have left inputs:
// its Pods still about, or its deletion seen a moment ago.
import { describe, expect, it } from 'vitest';
import {
  DELETED_NAME_MEMORY_MS,
  createDeletedNames,
  earlierRunPods,
} from '../../../../src/controller/issuerun/earlier-runs.js';
import { FakeClock } from '../../../support/fakes/controller.js';
import { RUN, T0, issueRun, runPod } from '../../../support/fakes/objects.js';

const ownedBy = (owner: { kind: string; name: string; uid: string; controller?: boolean }) => {
  const pod = runPod({ phase: 'Succeeded' });
  return {
    ...pod,
    metadata: {
      ...pod.metadata,
      ownerReferences: [{ apiVersion: 'lorenz.dev/v1alpha1', controller: true, ...owner }],
    },
  };
};

describe('earlier runs of a name', () => {
  const run = issueRun();
  it.each([
    ['no Pods', [], false],
    ['its own Pod', [ownedBy({ kind: 'IssueRun', name: RUN, uid: run.metadata.uid ?? '' })], false],
    [
      'an earlier run of its name',
      [ownedBy({ kind: 'IssueRun', name: RUN, uid: 'uid-old' })],
      true,
    ],
    ['another run', [ownedBy({ kind: 'IssueRun', name: 'other', uid: 'uid-old' })], false],
    ['not a run of the name', [ownedBy({ kind: 'Job', name: RUN, uid: 'uid-old' })], false],
    [
      'an owner that is not the controller',
      [ownedBy({ kind: 'IssueRun', name: RUN, uid: 'uid-old', controller: false })],
      false,
    ],
  ])('Pods about: %s → %s', (_name, pods, expected) => {
    expect(earlierRunPods(pods, run)).toBe(expected);
  });

  it('remembers a name seen gone for a while, then forgets it', () => {
    const clock = new FakeClock(T0);
    const names = createDeletedNames(clock.now);
    expect(names.recentlyGone('ns/a')).toBe(false);
    names.gone('ns/a');
    expect(names.recentlyGone('ns/a')).toBe(true);
    expect(names.recentlyGone('ns/b')).toBe(false);
    clock.advance(DELETED_NAME_MEMORY_MS + 1);
    expect(names.recentlyGone('ns/a')).toBe(false);
  });
});
