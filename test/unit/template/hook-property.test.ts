import { spawnSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderHookCommand } from '../../../src/template/hook.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import { tempDirPerSuite } from '../../support/temp-dir.js';

/**
 * Hostile issue text must reach a hook as data: for many random strings, rendered hook
 * commands run through one real bash must print every string byte for byte and run nothing.
 * All cases go into one script so that 10 000 of them cost one process, not 10 000.
 */

const CASES = 10_000;
// A fixed seed, so a failure is the same on every machine; LORENZ_PROPERTY_SEED explores others.
const SEED = Number(process.env.LORENZ_PROPERTY_SEED ?? 20_261_130);

/** Shell syntax that would do something if it were ever interpreted. */
const HOSTILE = [
  "'",
  '"',
  '\\',
  '`',
  '$',
  '$(',
  ')',
  '${',
  '}',
  '$((1+1))',
  '`touch pwned`',
  '$(touch pwned)',
  ';touch pwned;',
  '&&',
  '||',
  '|',
  '&',
  '>',
  '<',
  '>out',
  '*',
  '?',
  '[a]',
  '~',
  '!',
  '!!',
  '#',
  ' ',
  '\t',
  '\n',
  '\r',
  "'\\''",
  "$'\\x41'",
  '%s',
  '%n',
  '-n',
  '--',
  '{{',
  '}}',
  '{%',
  '%}',
  '\u007f',
  '\u00ff',
  '\u2028',
  '\u{1F600}',
  'é',
  '\u0301',
];

const noNul = (value: string) => !value.includes('\0');
const hostileText = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'binary-ascii', maxLength: 40 }),
    fc.string({ unit: fc.constantFrom(...HOSTILE), maxLength: 12 }),
    fc.string({
      unit: fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: 'binary', maxLength: 3 })),
      maxLength: 12,
    }),
  )
  .filter(noNul);

// `word` prints its only argument: a value that became zero or several words is reported.
const WORD_FUNCTION = 'word() { [ "$#" -eq 1 ] || printf "%d words\\n" "$#" >&2; printf %s "$1"; }';
const TITLE_COMMAND = 'word {{ issue.title }}';
const DESCRIPTION_COMMAND = 'word {{ issue.description | shell_escape }}';

describe('hook rendering with hostile issue text', () => {
  const dir = tempDirPerSuite('lorenz-hook-property-');

  it(`prints ${CASES} random titles and descriptions byte for byte and runs nothing`, async () => {
    const samples = fc.sample(fc.tuple(hostileText, hostileText), { numRuns: CASES, seed: SEED });
    expect(samples).toHaveLength(CASES);

    // Each value is followed by a NUL byte, which no value contains, so output splits cleanly.
    const script = [
      WORD_FUNCTION,
      ...samples.map(([title, description]) => {
        const issue = normalizeIssue({ identifier: 'ENG-1', title, description });
        return [
          renderHookCommand(TITLE_COMMAND, issue),
          "printf '\\0'",
          renderHookCommand(DESCRIPTION_COMMAND, issue),
          "printf '\\0'",
        ].join('\n');
      }),
    ].join('\n');
    const scriptPath = join(dir(), 'cases.sh');
    await writeFile(scriptPath, script);

    // One bash -c process sources the whole batch (too large to pass as one argument).
    const result = spawnSync('bash', ['-c', 'source "$1"', 'bash', scriptPath], {
      cwd: dir(),
      env: { PATH: process.env.PATH, HOME: dir(), LC_ALL: 'C' },
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(result.status, `seed ${SEED}`).toBe(0);
    expect(result.stderr.toString(), `seed ${SEED}`).toBe('');

    const printed: Buffer[] = [];
    let start = 0;
    for (let index = 0; index < result.stdout.length; index += 1) {
      if (result.stdout[index] === 0) {
        printed.push(result.stdout.subarray(start, index));
        start = index + 1;
      }
    }
    expect(start).toBe(result.stdout.length);
    const expected = samples.flat();
    expect(printed).toHaveLength(expected.length);
    const mismatch = expected.findIndex(
      (value, index) => !Buffer.from(value, 'utf8').equals(printed[index] ?? Buffer.alloc(0)),
    );
    expect(
      mismatch === -1
        ? null
        : { value: expected[mismatch], printed: printed[mismatch]?.toString() },
      `seed ${SEED}`,
    ).toBeNull();

    // Nothing ran: no `touch pwned`, no `>out` redirection left a file behind.
    expect(await readdir(dir())).toEqual(['cases.sh']);
  });
});
