import { describe, expect, it } from 'vitest';
import { boundedName, hookEventName, runPodName } from '../../src/controller/issuerun/names.js';

describe('object names', () => {
  it.each([
    ['short', 'eng-1', 0, 1, 'eng-1-0-1'],
    ['exactly 63', 'a'.repeat(59), 2, 3, `${'a'.repeat(59)}-2-3`],
  ])('keeps a name that fits (%s)', (_case, run, slot, attempt, expected) => {
    expect(runPodName(run, slot, attempt)).toBe(expected);
  });

  it('shortens long run names with a digest, stable and ≤ 63 characters', () => {
    const long = `${'x'.repeat(70)}-a`;
    const other = `${'x'.repeat(70)}-b`;
    const name = runPodName(long, 12, 3);
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^x+-[0-9a-f]{8}-12-3$/);
    expect(runPodName(long, 12, 3)).toBe(name);
    expect(runPodName(other, 12, 3)).not.toBe(name);
  });

  it('never leaves a dash or dot where the cut falls', () => {
    const name = boundedName(`${'a'.repeat(40)}${'-'.repeat(40)}`, '-0-1');
    expect(name).toMatch(/^a+-[0-9a-f]{8}-0-1$/);
  });

  it('names hook events <run>.<slot>-<attempt>-<seq>', () => {
    expect(hookEventName('eng-1', 0, 1, 7)).toBe('eng-1.0-1-7');
  });
});
