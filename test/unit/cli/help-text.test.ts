import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/cli/commands.js';
import { issueSchema } from '../../../src/workflow/issue.js';
import { CLI_BINS, runCli } from '../../support/cli-bins.js';

// What a user reads must stand on its own: no "the reference" they have never seen, no
// file of another repository (issue 25: `lorenz --help` said "the reference's snake_case
// keys").
const LEANS_OUTSIDE = [
  /the reference\b/i,
  /\bfacts\.md\b/i,
  /\bDESIGN\.md\b/i,
  /\.\.\/shared\b/,
  /\bspec says\b/i,
  /\bthe spec\b/i,
];

const dir = mkdtempSync(join(tmpdir(), 'lorenz-help-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const helpCalls: string[][] = [
  ['--help'],
  ['help'],
  ...Object.keys(COMMANDS).flatMap((words) => [
    [...words.split(' '), '--help'],
    [...words.split(' '), '-h'],
  ]),
];

describe.each(CLI_BINS)('help through $name', (bin) => {
  it.each(helpCalls.map((args) => [args.join(' '), args] as const))(
    '`lorenz %s` says what it means, citing nothing outside the repository',
    (_name, args) => {
      const result = runCli(bin, [...args], dir);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('usage:');
      for (const pattern of LEANS_OUTSIDE) expect(result.stdout).not.toMatch(pattern);
    },
  );

  it('names the issue keys an ISSUE file holds, each one the issue schema has', () => {
    const { stdout } = runCli(bin, ['--help'], dir);
    const paragraph = stdout.slice(stdout.indexOf('ISSUE is'), stdout.indexOf('optional.'));
    expect(paragraph).toMatch(/identifier and title required/);
    const named = paragraph
      .slice(paragraph.indexOf('required;'))
      .match(/\b[a-z]+(?:_[a-z]+)*\b/g)
      ?.filter((word) => word !== 'required');
    expect(named?.length).toBeGreaterThan(3);
    for (const key of named ?? []) expect(Object.keys(issueSchema.shape)).toContain(key);
  });
});
