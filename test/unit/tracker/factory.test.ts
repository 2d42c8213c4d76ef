import { describe, expect, it } from 'vitest';
import { createTracker } from '../../../src/tracker/index.js';
import { parseConfig } from '../../../src/workflow/config.js';

const configOf = (tracker: Record<string, unknown>) => parseConfig({ tracker }).config;

describe('the tracker a configuration names', () => {
  it.each([
    ['memory', { kind: 'memory' }],
    ['linear', { kind: 'linear', project_slug: 'abc123', api_key: 'lin_api_x' }],
    ['github', { kind: 'github', repository: 'acme/app', api_key: 'ghp_x' }],
    ['local', { kind: 'local' }],
    [
      'jira',
      {
        kind: 'jira',
        endpoint: 'https://acme.atlassian.net',
        email: 'bot@acme.test',
        project_key: 'ENG',
        api_key: 'jira-token',
      },
    ],
  ])('%s', (kind, tracker) => {
    expect(createTracker(configOf(tracker)).kind).toBe(kind);
  });

  it('refuses a kind it cannot poll, listing the ones it can', () => {
    expect(() => createTracker(configOf({ kind: 'trello' }))).toThrow(
      expect.objectContaining({
        code: 'unsupported_tracker_kind',
        message: expect.stringMatching(
          /"trello".*known: memory, linear, github, jira, local/,
        ) as unknown,
      }),
    );
  });

  it('checks a local configuration when it is built: a bad id_prefix is invalid_tracker_config', () => {
    expect(() => createTracker(configOf({ kind: 'local', id_prefix: '../' }))).toThrow(
      expect.objectContaining({ code: 'invalid_tracker_config' }),
    );
  });

  it('checks a jira configuration before any request: no token is missing_tracker_secret', () => {
    const tracker = {
      kind: 'jira',
      endpoint: 'https://acme.atlassian.net',
      email: 'bot@acme.test',
      project_key: 'ENG',
    };
    expect(() => createTracker(configOf(tracker), { env: {} })).toThrow(
      expect.objectContaining({ code: 'missing_tracker_secret' }),
    );
  });

  it('checks a linear configuration before any request: no key is missing_tracker_secret', () => {
    expect(() =>
      createTracker(configOf({ kind: 'linear', project_slug: 'abc123' }), { env: {} }),
    ).toThrow(expect.objectContaining({ code: 'missing_tracker_secret' }));
  });

  it('checks a github configuration before any request: no repository, no token', () => {
    expect(() =>
      createTracker(configOf({ kind: 'github', api_key: 'ghp_x' }), { env: {} }),
    ).toThrow(expect.objectContaining({ code: 'invalid_tracker_config' }));
    expect(() =>
      createTracker(configOf({ kind: 'github', repository: 'acme/app' }), { env: {} }),
    ).toThrow(expect.objectContaining({ code: 'missing_tracker_secret' }));
  });
});
