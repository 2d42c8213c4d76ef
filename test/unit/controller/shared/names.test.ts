import { describe, expect, it } from 'vitest';
import {
  boundedName,
  gitEventName,
  hookEventName,
  runPodName,
  uidFragment,
} from '../../../../src/controller/shared/object-names.js';
import { eachNamedCase } from '../../../support/cases.js';

describe('object names', () => {
  eachNamedCase('keeps a name that fits (%s)', runPodName, [
    ['short', 'eng-1', 0, 1, 'eng-1-0-1'],
    ['exactly 63', 'a'.repeat(59), 2, 3, `${'a'.repeat(59)}-2-3`],
  ]);

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

  const uid = '3f2b9c1e-5d4a-4b7e-9a21-0c8d7e6f5a4b';
  it('names hook events <run>.<uid8>.<slot>-<attempt>-<seq>, the same on a replay', () => {
    expect(hookEventName({ name: 'eng-1', uid }, 0, 1, 7)).toBe('eng-1.3f2b9c1e.0-1-7');
    expect(hookEventName({ name: 'eng-1', uid }, 0, 1, 7)).toBe(
      hookEventName({ name: 'eng-1', uid }, 0, 1, 7),
    );
  });

  it('names git events <run>.<uid8>.<slot>-<attempt>-git-<seq>, apart from hook events', () => {
    expect(gitEventName({ name: 'eng-1', uid }, 0, 2, 3)).toBe('eng-1.3f2b9c1e.0-2-git-3');
    expect(gitEventName({ name: 'eng-1', uid }, 0, 1, 7)).not.toBe(
      hookEventName({ name: 'eng-1', uid }, 0, 1, 7),
    );
  });

  it('gives a re-created run of the same name other Event names', () => {
    const again = '9e8d7c6b-0000-4000-8000-000000000000';
    expect(hookEventName({ name: 'eng-1', uid: again }, 0, 1, 7)).toBe('eng-1.9e8d7c6b.0-1-7');
    expect(uidFragment('')).toBe('0');
  });

  it('keeps Event names of the longest run names within 253 characters', () => {
    const longest = `${'r'.repeat(252)}a`;
    const name = hookEventName({ name: longest, uid }, 1234, 99, 100_000);
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).toMatch(/^r+-[0-9a-f]{8}\.3f2b9c1e\.1234-99-100000$/);
    expect(hookEventName({ name: longest, uid }, 1234, 99, 100_000)).toBe(name);
  });
});
