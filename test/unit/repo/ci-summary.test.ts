// .ci/run's closing line, counted from real vitest output (test/fixtures/vitest-output): it
// must never read "0 failed" for a run that failed, as it did for a unit tier whose tests all
// passed with an unhandled error, after which the other tiers never ran.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, scratchDir } from './scratch.js';

const scratch = scratchDir('lorenz-ci-summary-');

type Sample = 'passed-plain' | 'unhandled-error' | 'failed-test' | 'load-error';
const sample = (name: Sample) =>
  readFileSync(join(repoRoot, 'test/fixtures/vitest-output', `${name}.txt`), 'utf8');

/** What `make test` prints around the tiers: npm's banner, then each vitest run. */
function makeTestLog(tiers: Sample[]): string {
  const banner =
    '\n> lorenz-operator@0.1.0 test\n> vitest run --project unit && vitest run --project integration && vitest run --project containers\n';
  return ['npm run lint\nhack/ensure-sshd.sh', banner, ...tiers.map(sample)].join('\n');
}

function summary(log: string, tiers: number, status: number) {
  const file = join(scratch, `log-${Math.random().toString(36).slice(2)}`);
  writeFileSync(file, log);
  return spawnSync(join(repoRoot, '.ci/vitest-summary'), [file, String(tiers), String(status)], {
    encoding: 'utf8',
  });
}

describe('.ci/vitest-summary', () => {
  it.each<{ what: string; tiers: Sample[]; status: number; line: string }>([
    {
      what: 'three green tiers',
      tiers: ['passed-plain', 'passed-plain', 'passed-plain'],
      status: 0,
      line: 'vitest: 21 passed, 0 failed',
    },
    {
      what: 'an unhandled error in the unit tier, the others never run (issue 25)',
      tiers: ['unhandled-error'],
      status: 2,
      line: 'vitest: 57 passed, 3 failed (1 unhandled error, 2 tiers of 3 not run)',
    },
    {
      what: 'an unhandled error in the last tier',
      tiers: ['passed-plain', 'passed-plain', 'unhandled-error'],
      status: 2,
      line: 'vitest: 71 passed, 1 failed (1 unhandled error)',
    },
    {
      what: 'a failed test',
      tiers: ['failed-test'],
      status: 2,
      line: 'vitest: 2 passed, 3 failed (1 failed test, 2 tiers of 3 not run)',
    },
    {
      what: 'a test file that does not load (no failed test)',
      tiers: ['passed-plain', 'load-error'],
      status: 2,
      line: 'vitest: 14 passed, 2 failed (1 test file that did not load, 1 tier of 3 not run)',
    },
    {
      what: 'make test failing before vitest (lint)',
      tiers: [],
      status: 2,
      line: 'vitest: 0 passed, 3 failed (3 tiers of 3 not run)',
    },
    {
      what: 'a failure vitest does not show, after every tier passed',
      tiers: ['passed-plain', 'passed-plain', 'passed-plain'],
      status: 2,
      line: 'vitest: 21 passed, 0 failed; but make test exited 2: see above',
    },
  ])('$what: $line', ({ tiers, status, line }) => {
    const result = summary(makeTestLog(tiers), 3, status);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(`${line}\n`);
    expect(result.status).toBe(0);
  });

  it('reads the counts through vitest colours (the unhandled-error sample has them)', () => {
    expect(sample('unhandled-error')).toContain('\x1b[');
    expect(summary(sample('unhandled-error'), 1, 1).stdout).toBe(
      'vitest: 57 passed, 1 failed (1 unhandled error)\n',
    );
  });

  it('refuses a call without its three arguments, saying how to call it', () => {
    const result = spawnSync(join(repoRoot, '.ci/vitest-summary'), ['log'], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe('usage: .ci/vitest-summary <log> <tiers> <status>\n');
  });
});

describe('.ci/run', () => {
  /** .ci/run with `make` (and shellcheck, so nothing is installed) stood in for on PATH. */
  function ciRun(tiers: Sample[], status: number) {
    const bin = join(scratch, `bin-${tiers.join('-')}-${status}`);
    mkdirSync(bin, { recursive: true });
    const log = join(bin, 'make-test.out');
    writeFileSync(log, makeTestLog(tiers));
    writeFileSync(join(bin, 'make'), `#!/bin/sh\ncat '${log}'\nexit ${status}\n`);
    writeFileSync(join(bin, 'shellcheck'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(bin, 'make'), 0o755);
    chmodSync(join(bin, 'shellcheck'), 0o755);
    return spawnSync(join(repoRoot, '.ci/run'), [], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
    });
  }

  it('ends an unhandled error run with a line that counts it, and its exit status', () => {
    const result = ciRun(['unhandled-error'], 2);
    expect(result.status).toBe(2);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe(
      'vitest: 57 passed, 3 failed (1 unhandled error, 2 tiers of 3 not run)',
    );
  });

  it('ends a green run with "0 failed" and status 0', () => {
    const result = ciRun(['passed-plain', 'passed-plain', 'passed-plain'], 0);
    expect(result.status).toBe(0);
    expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('vitest: 21 passed, 0 failed');
  });
});
