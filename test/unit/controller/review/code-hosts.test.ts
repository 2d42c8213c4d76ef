// Which code host a Workflow's review loop talks to, and with what token: the clone address
// names the host and repository, review.host / review.api_url override, and the token comes
// from spec.review.credentialsSecretRef or the git credentials Secret's entry for the host.
import { describe, expect, it } from 'vitest';
import type { CodeHostOptions } from '../../../../src/codehost/types.js';
import {
  codeHostTarget,
  codeHostToken,
  createCodeHostCache,
} from '../../../../src/controller/review/code-hosts.js';
import { loadWorkflowText } from '../../../../src/template/load-workflow.js';
import { isLorenzError } from '../../../../src/workflow/errors.js';
import type { ReviewConfig } from '../../../../src/workflow/review-config.js';
import { FakeCodeHost } from '../../../support/fakes/code-host.js';
import { FakeKubeClient } from '../../../support/fakes/controller.js';
import { workflow, workflowText } from '../../../support/fakes/objects.js';

const config = (repo: string) =>
  loadWorkflowText(
    workflowText().replace('hooks:\n', `workspace:\n  git:\n    repo: ${repo}\nhooks:\n`),
    'test',
  ).config;
const review = (over: Partial<ReviewConfig> = {}) =>
  ({ host: null, apiUrl: null, ...over }) as ReviewConfig;

describe('the code host target', () => {
  it.each<[string, string, Partial<ReviewConfig>, Record<string, string>]>([
    [
      'github.com',
      'https://github.com/acme/app.git',
      {},
      {
        kind: 'github',
        apiUrl: 'https://api.github.com',
        repository: 'acme/app',
        host: 'github.com',
      },
    ],
    [
      'scp-like ssh',
      'git@github.com:acme/app.git',
      {},
      { kind: 'github', apiUrl: 'https://api.github.com', repository: 'acme/app' },
    ],
    [
      'GitHub Enterprise',
      'https://ghe.example/acme/app.git',
      { host: 'github' },
      { kind: 'github', apiUrl: 'https://ghe.example/api/v3', repository: 'acme/app' },
    ],
    [
      'self-hosted GitLab with subgroups',
      'https://gitlab.example/group/sub/app.git',
      { host: 'gitlab' },
      { kind: 'gitlab', apiUrl: 'https://gitlab.example/api/v4', repository: 'group/sub/app' },
    ],
    [
      'an API root given, with a port',
      'https://127.0.0.1:8443/acme/app.git',
      { host: 'github', apiUrl: 'https://127.0.0.1:9000' },
      { kind: 'github', apiUrl: 'https://127.0.0.1:9000', host: '127.0.0.1:8443' },
    ],
  ])('%s', (_name, repo, over, expected) => {
    expect(codeHostTarget(config(repo), review(over))).toMatchObject(expected);
  });

  it('asks for review.host when the host cannot be told', () => {
    expect(() => codeHostTarget(config('https://git.example/a/b.git'), review())).toThrow(
      /set review.host/,
    );
  });
});

const secret = (data: Record<string, string>) => ({
  data: Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
  ),
});

describe('the token', () => {
  it.each<[string, Parameters<typeof workflow>[0], Record<string, string>, string, string]>([
    [
      'its own Secret, default key',
      { review: { credentialsSecretRef: { name: 'cr' } } },
      { token: 't1' },
      'github.com',
      't1',
    ],
    [
      'its own Secret, a key',
      { review: { credentialsSecretRef: { name: 'cr', key: 'pat' } } },
      { pat: 't2' },
      'github.com',
      't2',
    ],
    [
      'the git Secret by host',
      { git: { credentialsSecretRef: { name: 'cr' } } },
      { 'github.com': 'x:t3' },
      'github.com',
      't3',
    ],
    [
      // A Secret key cannot hold a port; the run Pods' credential helper drops it too.
      'the git Secret by host name without the port, GitLab’s oauth2:<token>',
      { git: { credentialsSecretRef: { name: 'cr' } } },
      { '127.0.0.1': 'oauth2:glpat-t4\n' },
      '127.0.0.1:8443',
      'glpat-t4',
    ],
    [
      // The Pods' helper reads the first line only: the controller uses the same token.
      'only the first line of the value, as the run Pods read it',
      { git: { credentialsSecretRef: { name: 'cr' } } },
      { 'gitlab.example': 'oauth2:glpat-t5\nnot a token\n' },
      'gitlab.example',
      'glpat-t5',
    ],
  ])('%s', async (_name, spec, data, host, token) => {
    const client = new FakeKubeClient();
    client.answer({ match: 'GET secrets/cr', answer: { body: secret(data) } });
    expect(await codeHostToken(client, workflow(spec), host)).toBe(token);
  });

  it('names what is missing and never shows a token', async () => {
    const client = new FakeKubeClient();
    client.answer({
      match: 'GET secrets/cr',
      answer: { body: secret({ 'gitlab.com': 'secret-1' }) },
    });
    const error = await codeHostToken(
      client,
      workflow({ git: { credentialsSecretRef: { name: 'cr' } } }),
      'github.com',
    ).catch((e: unknown) => e);
    expect(isLorenzError(error) && error.code).toBe('invalid_codehost_config');
    expect(String((error as Error).message)).toBe('Secret cr has no key "github.com"');
    expect(String((error as Error).message)).not.toContain('secret-1');
  });

  it('keeps one host per Workflow while its target and token stay', async () => {
    const client = new FakeKubeClient();
    client.answer({ match: 'GET secrets/cr', answer: { body: secret({ 'github.com': 't' }) } });
    const made: CodeHostOptions[] = [];
    const cache = createCodeHostCache(client, (options) => {
      made.push(options);
      return new FakeCodeHost();
    });
    const wf = workflow({ git: { credentialsSecretRef: { name: 'cr' } } });
    const cfg = config('https://github.com/acme/app.git');
    const first = await cache(wf, cfg, review());
    expect(await cache(wf, cfg, review())).toBe(first);
    expect(made).toEqual([
      { kind: 'github', apiUrl: 'https://api.github.com', repository: 'acme/app', token: 't' },
    ]);
  });
});
