// The SSH worker's pure parts: host entries, known_hosts matching, what of the environment
// is shipped, the worker's root, and the ssh_timeout_ms check that precedes any transfer.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { remoteExports } from '../../../../src/executor/ssh/environment.js';
import { createSshExecutor } from '../../../../src/executor/ssh/index.js';
import { parseKnownHosts, verifyHostKey } from '../../../../src/executor/ssh/known-hosts.js';
import { resolveWorkspaceRoot, workerRoot } from '../../../../src/workspace/paths.js';
import { isLorenzError } from '../../../../src/workflow/errors.js';
import { parseSshHost } from '../../../../src/workflow/ssh-host.js';
import { eachCase } from '../../../support/cases.js';

describe('worker.ssh_hosts entries', () => {
  eachCase('%s', parseSshHost, [
    ['build-1', { user: null, host: 'build-1', port: 22 }],
    ['ci@build-1.example.com:2222', { user: 'ci', host: 'build-1.example.com', port: 2222 }],
    ['10.0.0.7', { user: null, host: '10.0.0.7', port: 22 }],
    ['[::1]:2200', { user: null, host: '::1', port: 2200 }],
    ['me@::1', { user: 'me', host: '::1', port: 22 }],
  ]);

  it.each(['', 'host:0', 'host:x', 'a b', '-host', '[::1', '[zz]:22', 'user name@host', 'h:70000'])(
    'refuses %j',
    (text) => {
      expect(parseSshHost(text)).toHaveProperty('error');
    },
  );
});

describe('known_hosts', () => {
  const key = Buffer.from('the-host-key');
  const other = Buffer.from('another-key');
  const line = (names: string, blob = key, marker = '') =>
    `${marker}${names} ssh-ed25519 ${blob.toString('base64')}`;

  it('matches names, [host]:port, wildcards and negations; tells unknown from changed', () => {
    const entries = parseKnownHosts(
      [
        '# comment',
        line('build-1,10.0.0.7'),
        line('[build-2]:2222'),
        line('*.pool.example,!bad.pool.example'),
      ].join('\n'),
    );
    expect(verifyHostKey(entries, 'build-1', key)).toEqual({ ok: true });
    expect(verifyHostKey(entries, '10.0.0.7', key)).toEqual({ ok: true });
    expect(verifyHostKey(entries, '[build-2]:2222', key)).toEqual({ ok: true });
    expect(verifyHostKey(entries, 'build-2', key)).toEqual({ ok: false, reason: 'unknown' });
    expect(verifyHostKey(entries, 'a.pool.example', key)).toEqual({ ok: true });
    expect(verifyHostKey(entries, 'bad.pool.example', key)).toEqual({
      ok: false,
      reason: 'unknown',
    });
    expect(verifyHostKey(entries, 'build-1', other)).toEqual({ ok: false, reason: 'changed' });
  });

  it('matches hashed entries and honours @revoked; skips @cert-authority', () => {
    const salt = Buffer.from('0123456789abcdefghij');
    const hash = createHmac('sha1', salt).update('[10.1.1.1]:2022').digest('base64');
    const entries = parseKnownHosts(
      [
        line(`|1|${salt.toString('base64')}|${hash}`),
        line('revoked-host', key, '@revoked '),
        line('revoked-host', key),
        line('ca-host', key, '@cert-authority '),
      ].join('\n'),
    );
    expect(verifyHostKey(entries, '[10.1.1.1]:2022', key)).toEqual({ ok: true });
    expect(verifyHostKey(entries, '10.1.1.1', key)).toEqual({ ok: false, reason: 'unknown' });
    expect(verifyHostKey(entries, 'revoked-host', key)).toEqual({ ok: false, reason: 'revoked' });
    expect(verifyHostKey(entries, 'ca-host', key)).toEqual({ ok: false, reason: 'unknown' });
  });
});

describe('the environment shipped to a worker', () => {
  const base = { PATH: '/usr/bin:/bin', HOME: '/home/me', SECRET: 's3cret', LANG: 'C' };

  it('is only what Lorenz added, with PATH as a prefix of the worker’s own', () => {
    const text = remoteExports(
      { ...base, PATH: '/ws/@lorenz-git/bin:/usr/bin:/bin', API_FLAG: "it's on", HOME: '/x' },
      base,
    );
    expect(text).toBe(`export PATH='/ws/@lorenz-git/bin':"$PATH"\nexport API_FLAG='it'\\''s on'\n`);
    expect(remoteExports(base, base)).toBe('');
    expect(remoteExports(undefined, base)).toBe('');
  });
});

describe('the workspace root on a worker', () => {
  it('expands ~ and ~/… against the worker’s HOME, leaves the rest as resolved', () => {
    const env = { HOME: '/home/laptop' };
    expect(workerRoot(resolveWorkspaceRoot('~/lorenz_workspaces', env), '/home/w')).toBe(
      '/home/w/lorenz_workspaces',
    );
    expect(workerRoot(resolveWorkspaceRoot('~', env), '/home/w')).toBe('/home/w');
    expect(workerRoot(resolveWorkspaceRoot('/srv/ws', env), '/home/w')).toBe('/srv/ws');
  });
});

describe('worker.ssh_timeout_ms before a transfer', () => {
  it.each([0, -5, 1.5, Number.NaN])(
    '%s fails invalid_ssh_timeout before connecting',
    async (value) => {
      const executor = createSshExecutor({
        // Nothing listens on port 1: reaching the network would fail ssh_connect instead.
        target: {
          host: { user: 'u', host: '127.0.0.1', port: 1 },
          privateKey: Buffer.from(''),
          knownHosts: '',
        },
        timeoutMs: value,
      });
      const error: unknown = await executor
        .copyTree('/tmp', '/tmp/x/y', { within: '/tmp/x' })
        .catch((caught: unknown) => caught);
      expect(isLorenzError(error) && error.code).toBe('invalid_ssh_timeout');
    },
  );
});
