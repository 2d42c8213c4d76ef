// `lorenz runner`'s flags: a run by default, a warm-up with --prepare. A warm-up's flags are
// its own (a run's are refused with it), --unless-commit goes only with --prepare and names a
// commit id; a usage error is exit 2, before anything is read.
import { describe, expect, it } from 'vitest';
import { RUN_POD_PATHS } from '../../../src/api/run-pod.js';
import { parseRunnerInvocation, runRunnerCommand } from '../../../src/runner/main.js';
import { eachCase } from '../../support/cases.js';

const SHA1 = 'a'.repeat(40);
const SHA256 = '0123456789abcdef'.repeat(4);
const DEFAULTS = {
  inputsDir: RUN_POD_PATHS.inputs,
  workspaceRoot: RUN_POD_PATHS.workspace,
  terminationLogPath: RUN_POD_PATHS.terminationLog,
};

describe('lorenz runner --prepare: flags', () => {
  eachCase('%j → %j', parseRunnerInvocation, [
    [['--prepare'], { mode: 'prepare', args: DEFAULTS }],
    [
      ['--prepare', '--unless-commit', SHA1.toUpperCase(), '--workspace', '/w'],
      { mode: 'prepare', args: { ...DEFAULTS, workspaceRoot: '/w', unlessCommit: SHA1 } },
    ],
    [
      ['--prepare', '--unless-commit', SHA256, '--git-credentials', '/c'],
      { mode: 'prepare', args: { ...DEFAULTS, unlessCommit: SHA256, gitCredentials: '/c' } },
    ],
    [
      ['--prepare', '--inputs', '/i', '--inputs-digest-file', '/d', '--termination-log', '/t'],
      {
        mode: 'prepare',
        args: {
          inputsDir: '/i',
          inputsDigestFile: '/d',
          workspaceRoot: '/workspace',
          terminationLogPath: '/t',
        },
      },
    ],
  ]);

  it('without --prepare it is a run', () => {
    expect(parseRunnerInvocation(['--slot', '2'])).toMatchObject({
      mode: 'run',
      args: { slot: 2 },
    });
  });

  it.each([
    [['--unless-commit', SHA1], "--unless-commit is a warm-up's flag: it goes with --prepare"],
    [
      ['--prepare', '--unless-commit', 'abc123'],
      '--unless-commit: not a commit id (40 or 64 hex digits): abc123',
    ],
    [['--prepare', '--unless-commit', `${SHA1}0`], 'not a commit id'],
    [['--prepare', '--unless-commit', 'g'.repeat(40)], 'not a commit id'],
    [['--prepare', '--slot', '1'], "--slot: not a warm-up's flag"],
    [
      ['--prepare', '--source-digest', `sha256:${SHA256}`, '--no-agent'],
      "--source-digest, --no-agent: not a warm-up's flag (--prepare takes --unless-commit, --inputs, --inputs-digest-file, --workspace, --git-credentials, --termination-log)",
    ],
  ])('%j is refused: %s', (argv, message) => {
    expect(() => parseRunnerInvocation(argv)).toThrow(message);
  });

  it('a usage error exits 2 before anything is read', async () => {
    expect(await runRunnerCommand(['--unless-commit', SHA1, '--inputs', '/nowhere'])).toBe(2);
    expect(await runRunnerCommand(['--prepare', '--unless-commit', 'HEAD'])).toBe(2);
  });
});
