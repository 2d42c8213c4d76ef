// `lorenz workflow validate` on what users keep in GitOps repositories, case by case from
// test/fixtures/validate/cases.yaml (the files beside it), through both ways the CLI starts.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CLI_BINS, runCli } from '../../support/cli-bins.js';

const DIR = join(import.meta.dirname, '../../fixtures/validate');

interface Case {
  file: string;
  stdin?: boolean;
  args?: string[];
  exit: number;
  stdout: string[];
  stderr: string[];
}

const CASES = parse(readFileSync(join(DIR, 'cases.yaml'), 'utf8')) as Case[];

const lines = (text: string) => (text === '' ? [] : text.trimEnd().split('\n'));

describe.each(CLI_BINS)('lorenz workflow validate through $name', (bin) => {
  it.each(CASES)('$file $args: exit $exit', (entry) => {
    const more = entry.args ?? [];
    const result = entry.stdin
      ? runCli(
          bin,
          ['workflow', 'validate', '-', ...more],
          DIR,
          readFileSync(join(DIR, entry.file), 'utf8'),
        )
      : runCli(bin, ['workflow', 'validate', entry.file, ...more], DIR);
    const shown = `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`;
    expect(result.code, shown).toBe(entry.exit);
    for (const [stream, expected] of [
      [result.stdout, entry.stdout],
      [result.stderr, entry.stderr],
    ] as const) {
      const printed = lines(stream);
      expect(printed, shown).toHaveLength(expected.length);
      expected.forEach((substring, index) => expect(printed[index], shown).toContain(substring));
    }
  });
});

it('the table lists every file of test/fixtures/validate', () => {
  const files = readdirSync(DIR).filter((name) => name !== 'cases.yaml');
  expect([...new Set(CASES.map((entry) => entry.file))].sort()).toEqual(files.sort());
});
