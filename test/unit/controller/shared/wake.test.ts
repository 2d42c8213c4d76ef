import { describe, expect, it } from 'vitest';
import { createWakeBoard, type WakeTarget } from '../../../../src/controller/shared/wake.js';

describe('the wake board', () => {
  it('tells the listeners of the kind woken, and only those', () => {
    const board = createWakeBoard();
    const polls: WakeTarget[] = [];
    const reviews: WakeTarget[] = [];
    board.subscribe('poll', (target) => polls.push(target));
    board.subscribe('review', (target) => reviews.push(target));
    board.wake({ kind: 'poll', namespace: 'team', workflow: 'eng' });
    expect(polls).toEqual([{ kind: 'poll', namespace: 'team', workflow: 'eng' }]);
    expect(reviews).toEqual([]);
  });

  it('stops telling a listener that unsubscribed, and survives one that throws', () => {
    const board = createWakeBoard();
    const seen: string[] = [];
    const stop = board.subscribe('poll', () => seen.push('first'));
    board.subscribe('poll', () => {
      throw new Error('listener broke');
    });
    board.subscribe('poll', () => seen.push('third'));
    board.wake({ kind: 'poll', namespace: 'team', workflow: 'eng' });
    stop();
    board.wake({ kind: 'poll', namespace: 'team', workflow: 'eng' });
    expect(seen).toEqual(['first', 'third', 'third']);
  });
});
