import { describe, expect, it } from 'vitest';
import { resolveCodeHost, tokenFromCredential } from '../../../src/codehost/resolve.js';
import { eachNamedCase } from '../../support/cases.js';

type Review = Parameters<typeof resolveCodeHost>[0];
const auto: Review = { host: null, apiUrl: null };

type Where = Omit<ReturnType<typeof resolveCodeHost>, 'host'>;
const github = (repository: string, apiUrl = 'https://api.github.com'): Where => ({
  kind: 'github',
  apiUrl,
  repository,
});
const gitlab = (repository: string, apiUrl = 'https://gitlab.com/api/v4'): Where => ({
  kind: 'gitlab',
  apiUrl,
  repository,
});
const ghe: Review = { host: 'github', apiUrl: null };
const selfGitlab: Review = { host: 'gitlab', apiUrl: null };

describe('resolveCodeHost', () => {
  it.each<[string, Review, string, Where]>([
    ['github.com over https', auto, 'https://github.com/acme/app.git', github('acme/app')],
    ['github.com without .git', auto, 'https://github.com/acme/app', github('acme/app')],
    ['github.com over ssh, scp-like', auto, 'git@github.com:acme/app.git', github('acme/app')],
    [
      'github.com with a token in the URL',
      auto,
      'https://x-access-token:ghs_abc@github.com/acme/app.git',
      github('acme/app'),
    ],
    ['GitHub.com in capitals', auto, 'https://GitHub.com/acme/app.git', github('acme/app')],
    [
      'gitlab.com with nested groups',
      auto,
      'https://gitlab.com/acme/platform/app.git',
      gitlab('acme/platform/app'),
    ],
    ['gitlab.com over ssh', auto, 'git@gitlab.com:acme/sub/app.git', gitlab('acme/sub/app')],
    [
      'GitHub Enterprise',
      ghe,
      'https://ghe.example/acme/app.git',
      github('acme/app', 'https://ghe.example/api/v3'),
    ],
    [
      'GitHub Enterprise over ssh',
      ghe,
      'git@ghe.example:acme/app.git',
      github('acme/app', 'https://ghe.example/api/v3'),
    ],
    [
      'self-hosted GitLab on a port',
      selfGitlab,
      'https://git.example:8443/a/b/c.git',
      gitlab('a/b/c', 'https://git.example:8443/api/v4'),
    ],
    [
      'self-hosted GitLab over ssh://',
      selfGitlab,
      'ssh://git@git.example:2222/a/b.git',
      gitlab('a/b', 'https://git.example/api/v4'),
    ],
    [
      'an explicit API URL',
      { host: 'github', apiUrl: 'http://127.0.0.1:9999/' },
      'https://127.0.0.1:4443/acme/app.git',
      github('acme/app', 'http://127.0.0.1:9999'),
    ],
    [
      'an explicit API URL with a path',
      { host: null, apiUrl: 'https://proxy.example/gh/api/v3' },
      'https://github.com/acme/app.git',
      github('acme/app', 'https://proxy.example/gh/api/v3'),
    ],
  ])('%s', (_name, review, cloneUrl, expected) => {
    const { host: _host, ...where } = resolveCodeHost(review, cloneUrl);
    expect(where).toEqual(expected);
  });

  it.each<[string, Review, string, RegExp]>([
    [
      'an unknown host without review.host',
      auto,
      'https://git.example/acme/app.git',
      /review\.host.*git\.example/,
    ],
    [
      'a GitHub path of three segments',
      auto,
      'https://github.com/acme/app/extra.git',
      /not owner\/name/,
    ],
    ['a GitLab path of one segment', auto, 'https://gitlab.com/app.git', /not group\/project/],
    [
      'a path with ..',
      { host: 'gitlab', apiUrl: null },
      'https://git.example/a/../b.git',
      /not group\/project/,
    ],
    ['a file URL', auto, 'file:///srv/git/app.git', /https, ssh or host:path/],
    ['nothing like an address', auto, 'not an address', /neither a URL nor host:path/],
    [
      'an API URL that is not http',
      { host: 'github', apiUrl: 'ftp://ghe.example' },
      'https://github.com/a/b',
      /review\.api_url/,
    ],
  ])('refuses %s with invalid_codehost_config', (_name, review, cloneUrl, message) => {
    const resolve = () => resolveCodeHost(review, cloneUrl);
    expect(resolve).toThrow(message);
    expect(resolve).toThrow(expect.objectContaining({ code: 'invalid_codehost_config' }));
  });

  it('never quotes a clone address, which may hold a token', () => {
    const resolve = () => resolveCodeHost(auto, 'https://u:ghs_secret123@git.example/a/b.git');
    expect(resolve).toThrow(/git\.example/);
    expect(resolve).not.toThrow(/ghs_secret123/);
  });
});

describe('tokenFromCredential', () => {
  eachNamedCase('reads %s', tokenFromCredential, [
    ['a bare token', 'ghp_abc123', 'ghp_abc123'],
    ['a token with a newline', 'ghp_abc123\n', 'ghp_abc123'],
    ['username:token', 'x-access-token:ghs_abc', 'ghs_abc'],
    ['a credential-store line', 'https://oauth2:glpat-xyz@gitlab.com', 'glpat-xyz'],
    ['a credential-store line with an escaped token', 'https://u:a%2Fb@ghe.example\n', 'a/b'],
  ]);

  it.each([
    ['nothing', '  '],
    ['a credential-store line without a token', 'https://user@github.com'],
    ['two lines', 'ghp_one\nghp_two'],
  ])('refuses %s', (_name, text) => {
    expect(() => tokenFromCredential(text)).toThrow(
      expect.objectContaining({ code: 'invalid_codehost_config' }),
    );
  });
});

describe('the host the git credentials are keyed by', () => {
  it.each([
    ['https://github.com/acme/app.git', 'github.com'],
    ['https://x-access-token:ghs_secret123@GitHub.com/acme/app', 'github.com'],
    ['https://127.0.0.1:8443/acme/app.git', '127.0.0.1:8443'],
    ['git@gitlab.com:group/app.git', 'gitlab.com'],
  ])('%s → %s', (cloneUrl, host) => {
    expect(resolveCodeHost({ host: 'github', apiUrl: null }, cloneUrl).host).toBe(host);
  });
});
