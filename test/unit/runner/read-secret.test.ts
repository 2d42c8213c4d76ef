// The runner reads its three mounted secrets (tools token, git credentials, SSH key) through
// one helper: nothing asked, nothing read; a failed read is kept as an Error, not thrown.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSecret } from '../../../src/runner/read-secret.js';
import { readToolsToken } from '../../../src/runner/tools.js';

/** A read that throws `thrown`, which need not be an Error (a library may throw a string). */
const fail = (thrown: unknown) => async (): Promise<never> => {
  throw thrown;
};

describe('readSecret', () => {
  it.each([
    [
      'no source: nothing read',
      undefined,
      async (s: string) => s,
      { value: undefined, error: undefined, secrets: [] },
    ],
    [
      'a value and its secrets',
      'abc',
      async (s: string) => s.toUpperCase(),
      { value: 'ABC', error: undefined, secrets: ['ABC'] },
    ],
    [
      'a read that throws an Error keeps it',
      'abc',
      fail(new Error('EACCES: the file')),
      { value: undefined, error: new Error('EACCES: the file'), secrets: [] },
    ],
    [
      'a read that throws something else gets an Error with its text',
      'abc',
      fail('plain text'),
      { value: undefined, error: new Error('plain text'), secrets: [] },
    ],
  ])('%s', async (_name, source, read, want) => {
    expect(await readSecret(source, read, (value) => [value])).toEqual(want);
  });

  it('secrets that cannot be listed: the value is kept with the error (for dispose)', async () => {
    const result = await readSecret('dir', async (s) => ({ dir: s }), fail(new Error('EISDIR')));
    expect(result).toEqual({ value: { dir: 'dir' }, error: new Error('EISDIR'), secrets: [] });
  });

  it.each([
    ['a token file', 'tok-123\n', { value: 'tok-123', secrets: ['tok-123'] }],
    ['an empty token file', '\n', { value: undefined, secrets: [] }],
  ])('the tools token from %s', async (_name, text, want) => {
    const dir = await mkdtemp(join(tmpdir(), 'lorenz-secret-'));
    const tokenFile = join(dir, 'token');
    await writeFile(tokenFile, text);
    const tools = { url: 'http://gw', tokenFile, serverName: 'lorenz' };
    const result = await readSecret(tools, readToolsToken, (token) => [token]);
    expect(result).toMatchObject(want);
    expect(result.error === undefined).toBe(want.value !== undefined);
  });
});
