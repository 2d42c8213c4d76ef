import { describe, expect, it } from 'vitest';
import {
  MIN_SECRET_LENGTH,
  REDACTED,
  createRedactor,
  secretsFromEnv,
} from '../../../src/runner/redact.js';
import { truncateOutput } from '../../../src/workspace/output.js';

describe('secret redaction in what the runner reports', () => {
  it('takes the values to redact from the prefixed copies and hides the copies', () => {
    const { secrets, env } = secretsFromEnv({
      PATH: '/usr/bin',
      API_KEY: 'sk-live-123456',
      LORENZ_REDACT_0: 'sk-live-123456',
      LORENZ_REDACT_FROM0_TOKEN: 'ghp_abcdef\n',
      LORENZ_REDACT_1: 'no',
    });
    expect(secrets.sort()).toEqual(['ghp_abcdef', 'ghp_abcdef\n', 'sk-live-123456']);
    expect(env).toEqual({ PATH: '/usr/bin', API_KEY: 'sk-live-123456' });
  });

  it.each([
    ['in the middle of a line', 'key=sk-live-123456 ok', `key=${REDACTED} ok`],
    ['several times', 'sk-live-123456/sk-live-123456', `${REDACTED}/${REDACTED}`],
    [
      'a longer secret that contains a shorter one',
      'Bearer sk-live-123456-extended',
      `Bearer ${REDACTED}`,
    ],
    ['nothing when absent', 'all clear', 'all clear'],
  ])('replaces %s', (_case, input, output) => {
    const redact = createRedactor(['sk-live-123456', 'sk-live-123456-extended']);
    expect(redact.text(input)).toBe(output);
  });

  it('leaves values too short to be secrets alone', () => {
    expect(MIN_SECRET_LENGTH).toBe(4);
    expect(createRedactor(['abc']).text('abc abc')).toBe('abc abc');
  });

  it('redacts a secret cut in half by the output truncation', () => {
    const secret = 'sk-live-0123456789abcdef';
    const output = truncateOutput(`${'x'.repeat(4096 - 10)}${secret}`).text;
    expect(output).toContain(secret.slice(0, 10));
    const redacted = createRedactor([secret]).text(output);
    expect(redacted).not.toContain(secret.slice(0, 10));
    expect(redacted).toMatch(/x\[redacted\]\n\[truncated 14 chars\]$/);
  });

  it('redacts every string of an event, nested or not, and keeps the rest', () => {
    const redact = createRedactor(['hunter22']);
    const event = {
      type: 'hook_execution',
      message: { hook: 'after_create', output: 'pw=hunter22', exitCode: 0, tags: ['hunter22'] },
    };
    expect(redact.value(event)).toEqual({
      type: 'hook_execution',
      message: { hook: 'after_create', output: `pw=${REDACTED}`, exitCode: 0, tags: [REDACTED] },
    });
  });
});
