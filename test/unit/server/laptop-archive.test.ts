// Which archive a `lorenz server` opens when no flag names one: on a laptop, the file the
// laptop controller archives to by default, when it exists; nothing in a cluster or with off.
import { describe, expect, it } from 'vitest';
import { laptopArchiveDsn } from '../../../src/server/main.js';

const FILE = '/home/me/.cache/lorenz/archive.db';

describe('laptopArchiveDsn', () => {
  it.each([
    ['local mode, the file exists', { auth: 'local' as const }, true, `sqlite:${FILE}`],
    ['local mode, no file yet', { auth: 'local' as const }, false, undefined],
    ['token mode (in a cluster)', { auth: 'token' as const }, true, undefined],
    ['--archive-dsn off', { auth: 'local' as const, archiveDsn: 'off' }, true, undefined],
    ['--archive-url given', { auth: 'local' as const, archiveUrl: 'http://x' }, true, undefined],
  ])('%s', (_name, options, exists, expected) => {
    expect(laptopArchiveDsn(options, FILE, () => exists)).toBe(expected);
  });
});
