import { describe, expect, it } from 'vitest';
import { isActiveState } from '../../../src/workflow/states.js';

const tracker = { activeStates: ['Todo', 'In Progress'], terminalStates: ['Done', 'Cancelled'] };

describe('isActiveState', () => {
  it.each([
    ['Todo', true],
    ['in progress', true],
    ['  In Progress\n', true],
    ['Done', false],
    ['Backlog', false],
    ['', false],
    [null, false],
  ])('%j → %s', (state, expected) => {
    expect(isActiveState(state, tracker)).toBe(expected);
  });

  it('treats a state listed as both active and terminal as terminal', () => {
    expect(isActiveState('Done', { activeStates: ['Done'], terminalStates: ['done'] })).toBe(false);
  });
});
