// Two writers of one Workflow status: the Workflow reconciler patches its fields one by one and
// never names status.warm; the warm controller merge-patches status.warm alone, its dropped
// keys as null. Neither can overwrite the other's with a stale copy.
import { describe, expect, it } from 'vitest';
import { statusFieldsPatch } from '../../../../src/controller/shared/status-writer.js';
import { warmStatusPatch } from '../../../../src/controller/warm/status.js';

describe("the Workflow reconciler's status patch", () => {
  it('sets its fields and removes the ones it dropped, never warm', () => {
    expect(
      statusFieldsPatch(
        { message: 'old', budget: { day: 'x' }, warm: { snapshot: 'a' } },
        { message: 'ready', observedGeneration: 2, warm: { snapshot: 'stale' } },
        ['warm'],
      ),
    ).toEqual([
      { op: 'add', path: '/status/message', value: 'ready' },
      { op: 'add', path: '/status/observedGeneration', value: 2 },
      { op: 'remove', path: '/status/budget' },
    ]);
  });

  it('a first status is added whole, without warm', () => {
    expect(
      statusFieldsPatch(undefined, { message: 'ready', warm: { build: 1 } }, ['warm']),
    ).toEqual([{ op: 'add', path: '/status', value: { message: 'ready' } }]);
  });
});

describe("the warm controller's status patch", () => {
  it('names every key of status.warm, the absent ones as null', () => {
    const patch = warmStatusPatch({ build: 2, reason: 'WarmUpRunning', building: 'wf-warm-2' });
    expect(patch.status.warm).toMatchObject({
      build: 2,
      building: 'wf-warm-2',
      reason: 'WarmUpRunning',
      snapshot: null,
      digest: null,
      checkedAt: null,
    });
    expect(Object.keys(patch.status)).toEqual(['warm']);
  });

  it('warm off: status.warm is removed', () => {
    expect(warmStatusPatch(undefined)).toEqual({ status: { warm: null } });
  });
});
