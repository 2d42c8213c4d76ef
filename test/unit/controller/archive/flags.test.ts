import { describe, expect, it } from 'vitest';
import {
  archiveOption,
  parseByteSize,
  parseControllerArgs,
  parseDurationFlag,
} from '../../../../src/controller/main.js';

describe('the archive flags of lorenz controller', () => {
  it.each([
    {
      flag: 'sqlite:/var/lib/lorenz/archive.db',
      env: {},
      expected: { archive: { dsn: 'sqlite:/var/lib/lorenz/archive.db' } },
    },
    {
      flag: 'postgres://lorenz@db/lorenz',
      env: {},
      expected: { archive: { dsn: 'postgres://lorenz@db/lorenz' } },
    },
    { flag: 'off', env: {}, expected: { archiveOff: '--archive-dsn=off' } },
    {
      flag: undefined,
      env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' },
      expected: { archiveOff: expect.stringContaining('in a cluster') },
    },
    {
      flag: undefined,
      env: { XDG_CACHE_HOME: '/home/me/.cache' },
      expected: { archive: { dsn: 'sqlite:/home/me/.cache/lorenz/archive.db' } },
    },
  ])('--archive-dsn $flag with $env', ({ flag, env, expected }) => {
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = (env as { XDG_CACHE_HOME?: string }).XDG_CACHE_HOME ?? saved;
    try {
      expect(archiveOption(flag, env)).toEqual(expected);
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
  });

  it('refuses a DSN of another kind, naming the flag', () => {
    expect(() => archiveOption('mysql://x', {})).toThrow(/--archive-dsn "mysql:\/\/x": expected/);
  });

  it.each([
    ['33554432', 33554432],
    ['32Mi', 32 * 1024 * 1024],
    ['32MiB', 32 * 1024 * 1024],
    ['1Gi', 1024 ** 3],
    ['64k', 64_000],
  ])('--archive-log-cap %s', (text, bytes) => {
    expect(parseByteSize('--archive-log-cap', text)).toBe(bytes);
  });

  it.each(['', '0', '-1', '32 potatoes', 'Mi'])('refuses --archive-log-cap %j', (text) => {
    expect(() => parseByteSize('--archive-log-cap', text)).toThrow(/--archive-log-cap/);
  });

  it.each([
    ['24h', 86_400_000],
    ['1h30m', 5_400_000],
    ['90s', 90_000],
    ['500ms', 500],
  ])('--archive-give-up-after %s', (text, ms) => {
    expect(parseDurationFlag('--archive-give-up-after', text)).toBe(ms);
  });

  it.each(['', '10', '1d', 'soon', '5m soon'])('refuses --archive-give-up-after %j', (text) => {
    expect(() => parseDurationFlag('--archive-give-up-after', text)).toThrow(
      /--archive-give-up-after/,
    );
  });

  it('parses them into the controller options', () => {
    expect(
      parseControllerArgs([
        '--archive-dsn=sqlite:/tmp/a.db',
        '--archive-log-cap=8Mi',
        '--archive-give-up-after=2h',
      ]),
    ).toMatchObject({
      archive: { dsn: 'sqlite:/tmp/a.db' },
      archiveLogCapBytes: 8 * 1024 * 1024,
      archiveGiveUpAfterMs: 7_200_000,
    });
  });
});
