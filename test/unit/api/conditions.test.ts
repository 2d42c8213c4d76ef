import { describe, expect, it } from 'vitest';
import {
  findCondition,
  isConditionTrue,
  removeCondition,
  rfc3339,
  setCondition,
  SUCCEEDED,
  FINISHED,
  type Condition,
} from '../../../src/api/index.js';

const t0 = new Date('2025-01-01T00:00:00.123Z');
const t1 = new Date('2025-01-01T00:05:00Z');

const running: Condition = {
  type: SUCCEEDED,
  status: 'Unknown',
  reason: 'Running',
  message: 'hooks running',
  observedGeneration: 1,
  lastTransitionTime: rfc3339(t0),
};

describe('setCondition', () => {
  it.each([
    {
      name: 'adds a new type with now as the transition time',
      before: [] as Condition[],
      next: { type: FINISHED, status: 'False' as const, reason: 'Running', message: '' },
      expected: [
        {
          type: FINISHED,
          status: 'False',
          reason: 'Running',
          message: '',
          lastTransitionTime: '2025-01-01T00:05:00Z',
        },
      ],
    },
    {
      name: 'keeps lastTransitionTime when the status is unchanged, takes the rest',
      before: [running],
      next: {
        type: SUCCEEDED,
        status: 'Unknown' as const,
        reason: 'Running',
        message: 'turn 2',
        observedGeneration: 2,
      },
      expected: [{ ...running, message: 'turn 2', observedGeneration: 2 }],
    },
    {
      name: 'moves lastTransitionTime when the status changes',
      before: [running],
      next: {
        type: SUCCEEDED,
        status: 'False' as const,
        reason: 'HookFailed',
        message: 'after_create exited 1',
        observedGeneration: 1,
      },
      expected: [
        {
          type: SUCCEEDED,
          status: 'False',
          reason: 'HookFailed',
          message: 'after_create exited 1',
          observedGeneration: 1,
          lastTransitionTime: '2025-01-01T00:05:00Z',
        },
      ],
    },
  ])('$name', ({ before, next, expected }) => {
    const snapshot = structuredClone(before);
    expect(setCondition(before, next, t1)).toEqual(expected);
    expect(before).toEqual(snapshot);
  });

  it('keeps the order of the other conditions', () => {
    const finished: Condition = { ...running, type: FINISHED, status: 'False' };
    const after = setCondition(
      [running, finished],
      { ...running, status: 'True', reason: 'Succeeded' },
      t1,
    );
    expect(after.map((c) => c.type)).toEqual([SUCCEEDED, FINISHED]);
    expect(after[1]).toBe(finished);
  });

  it('accepts an absent list, finds, tests and removes conditions', () => {
    const list = setCondition(
      undefined,
      { type: FINISHED, status: 'True', reason: 'Succeeded', message: '' },
      t1,
    );
    expect(isConditionTrue(list, FINISHED)).toBe(true);
    expect(isConditionTrue(list, SUCCEEDED)).toBe(false);
    expect(findCondition(list, FINISHED)?.reason).toBe('Succeeded');
    expect(removeCondition(list, FINISHED)).toEqual([]);
  });

  it('formats times like metav1.Time (seconds, Z)', () => {
    expect(rfc3339(t0)).toBe('2025-01-01T00:00:00Z');
  });
});
