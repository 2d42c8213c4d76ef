import { describe, expect, it } from 'vitest';
import { createCodeHost } from '../../../src/codehost/index.js';

const options = { apiUrl: 'https://api.github.com', repository: 'acme/app', token: 'ghp_x' };

describe('createCodeHost', () => {
  it('builds the GitHub code host for kind github', () => {
    const host = createCodeHost({ kind: 'github', ...options });
    expect(host).toMatchObject({ kind: 'github', repository: 'acme/app' });
  });

  it('says that a code host kind is not built in', () => {
    expect(() => createCodeHost({ kind: 'gitlab', ...options })).toThrow(
      expect.objectContaining({
        code: 'invalid_codehost_config',
        message: expect.stringMatching(/gitlab/),
      }),
    );
  });
});
