import { describe, expect, it } from 'vitest';
import { createCodeHost } from '../../../src/codehost/index.js';

const options = { repository: 'acme/app', token: 'glpat_x' };

describe('createCodeHost', () => {
  it.each([
    ['github', 'https://api.github.com'],
    ['gitlab', 'https://gitlab.com/api/v4'],
  ] as const)('builds the %s code host for its kind', (kind, apiUrl) => {
    const host = createCodeHost({ kind, apiUrl, ...options });
    expect(host).toMatchObject({ kind, repository: 'acme/app' });
  });
});
