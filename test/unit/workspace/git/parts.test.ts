import { execFile } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { slugify } from '../../../../src/template/git-templates.js';
import { parseConfig } from '../../../../src/workflow/config.js';
import { isLorenzError } from '../../../../src/workflow/errors.js';
import { normalizeIssue } from '../../../../src/workflow/issue.js';
import {
  credentialSecrets,
  loadGitCredentials,
  parseStoreLine,
  resolveBranchName,
  resolveRemote,
  secretToken,
} from '../../../../src/workspace/git/index.js';
import { credentialHelperScript } from '../../../../src/workspace/git/guard-scripts.js';
import { branchMatches, branchNameProblem } from '../../../../src/workspace/git/repo-and-branch.js';
import { inferSetup, parseSetupFile } from '../../../../src/workspace/git/setup-file.js';
import { writeInput } from '../../../support/child-input.js';
import { makeTempDir, removeTempDir } from '../../../support/workspace.js';
import { eachCase } from '../../../support/cases.js';

const run = promisify(execFile);

function gitConfig(git: Record<string, unknown> | null) {
  const config = parseConfig({ workspace: { git } }).config.workspace.git;
  if (!config) throw new Error('workspace.git did not parse');
  return config;
}

function codeOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    return isLorenzError(error) ? `${error.code}: ${error.message}` : String(error);
  }
  return 'no error';
}

const issue = normalizeIssue({ identifier: 'ENG-42', title: 'Fix the Login page — très vite!' });

describe('branch names', () => {
  eachCase('slug of %j is %j', slugify, [
    ['Fix the Login page!', 'fix-the-login-page'],
    ['Crème brûlée', 'creme-brulee'],
    ['  --- ', ''],
    ['a'.repeat(60), 'a'.repeat(48)],
    [
      'one two three four five six seven eight nine ten eleven',
      'one-two-three-four-five-six-seven-eight-nine-ten',
    ],
  ]);

  it('renders the default template from the identifier and the title', () => {
    expect(resolveBranchName(gitConfig({ repo: 'https://h/x.git' }), issue)).toBe(
      'lorenz/eng-42-fix-the-login-page-tres-vite',
    );
  });

  it.each([
    ['main', 'a protected branch'],
    ['{{ issue.missing }}', 'workspace.git.branch'],
    ['fix/{{ issue.title }}', 'not a branch name: it contains a space'],
    ['-x', 'starts with "-"'],
    ['a..b', 'contains ".."'],
    ['a/.hidden', 'starts with "."'],
    ['x.lock', 'ends with ".lock"'],
    ['release/1', 'a protected branch'],
  ])('refuses the branch template %j (%s)', (branch, why) => {
    const git = gitConfig({ repo: 'https://h/x.git', branch, protected: ['release/*'] });
    const failure = codeOf(() => resolveBranchName(git, issue));
    expect(failure).toMatch(/^workspace_branch_unresolved: /);
    expect(failure).toContain(why);
  });

  it('checks names as git check-ref-format does', () => {
    expect(branchNameProblem('lorenz/eng-1-ok')).toBeNull();
    expect(branchNameProblem('')).toBe('it is empty');
    expect(branchNameProblem('a//b')).toBe('it has an empty path component');
    expect(branchNameProblem('a@{b')).toContain('@{');
  });

  eachCase('pattern %j matches %j: %s', branchMatches, [
    ['release/*', 'release/1', true],
    ['release/*', 'release/1/hotfix', false],
    ['release/**', 'release/1/hotfix', true],
    ['main', 'main', true],
    ['main', 'mainline', false],
    ['v?.x', 'v1.x', true],
  ]);
});

describe('the repository to clone', () => {
  it.each([
    [{ repo: 'https://github.com/acme/web.git' }, 'https://github.com/acme/web.git', 'github.com'],
    [{ repo: 'git@gitlab.com:acme/web.git' }, 'git@gitlab.com:acme/web.git', 'gitlab.com'],
    [
      { repo: 'acme/web', repo_template: 'https://gitlab.example.com/{{ repo }}.git' },
      'https://gitlab.example.com/acme/web.git',
      'gitlab.example.com',
    ],
    [
      { repo: 'acme/web', repo_template: 'git@github.com:{{ owner }}/{{ name }}.git' },
      'git@github.com:acme/web.git',
      'github.com',
    ],
  ])('%j clones %s', (git, url, host) => {
    expect(resolveRemote(gitConfig(git))).toEqual({ url, host });
  });

  it.each([
    [{}, 'workspace_repo_missing'],
    [{ repo: '  ' }, 'workspace_repo_missing'],
    [{ repo: 'acme/web' }, 'workspace_repo_no_clone_address'],
    [{ repo: 'ftp://h/x' }, 'workspace_repo_no_clone_address'],
    [{ repo: 'https://user:tok@github.com/acme/web.git' }, 'invalid_workflow_config'],
    [{ repo: 'https://x-access-token@github.com/acme/web.git' }, 'invalid_workflow_config'],
  ])('%j fails %s', (git, code) => {
    expect(codeOf(() => resolveRemote(gitConfig(git)))).toMatch(new RegExp(`^${code}: `));
  });

  it('validates the section itself', () => {
    expect(codeOf(() => parseConfig({ workspace: { git: 'yes' } }))).toBe(
      'invalid_workflow_config: workspace.git: must be a map',
    );
    expect(codeOf(() => parseConfig({ workspace: { git: { setup_binaries: ['/bin/sh'] } } }))).toBe(
      'invalid_workflow_config: workspace.git.setup_binaries[0]: must be a binary name, not a path',
    );
    expect(codeOf(() => parseConfig({ workspace: { git: { depth: 0 } } }))).toBe(
      'invalid_workflow_config: workspace.git.depth: must be a positive integer',
    );
    expect(
      codeOf(() => parseConfig({ workspace: { isolation: 'none', git: { repo: 'https://h/x' } } })),
    ).toMatch(
      /^invalid_workflow_config: workspace.isolation = "none" does not support workspace.git/,
    );
    expect(parseConfig({ workspace: { git: { repos: 'x' } } }).warnings).toEqual([
      'unknown key workspace.git.repos',
    ]);
  });
});

describe('repository setup files', () => {
  it('reads setup and teardown steps, in YAML and JSON', () => {
    const yaml =
      'setup:\n  - [pnpm, install, --frozen-lockfile]\n  - [pnpm, run, generate]\nteardown:\n  - [node, scripts/clean-up.mjs]\n';
    expect(parseSetupFile(yaml, '.lorenz/workspace.yml')).toEqual({
      setup: [
        ['pnpm', 'install', '--frozen-lockfile'],
        ['pnpm', 'run', 'generate'],
      ],
      teardown: [['node', 'scripts/clean-up.mjs']],
    });
    expect(
      parseSetupFile('{"setup": [["npm", "ci"]], "teardown": []}', '.lorenz/workspace.json'),
    ).toEqual({
      setup: [['npm', 'ci']],
      teardown: [],
    });
    // Leaving setup out means "infer it"; `setup: []` means none.
    expect(parseSetupFile('teardown: []', 'f.yml').setup).toBeNull();
    expect(parseSetupFile('setup: []', 'f.yml').setup).toEqual([]);
  });

  it.each([
    ['setup: pnpm install', 'f.yml: setup must be a list of steps'],
    ['setup:\n  - pnpm install', 'f.yml: setup[0] must be a list [binary, argument, …]'],
    ['setup:\n  - []', 'f.yml: setup[0] must be a list [binary, argument, …]'],
    ['setup:\n  - [pnpm, {a: 1}]', 'f.yml: setup[0] must hold only strings'],
    ['scripts: []', 'f.yml: unknown key scripts (only setup and teardown)'],
    ['[1, 2]', 'f.yml must be a map with setup and teardown'],
    ['setup: [', 'f.yml does not parse'],
  ])('refuses %j', (text, message) => {
    expect(() => parseSetupFile(text, 'f.yml')).toThrow(message);
  });

  it.each([
    [[], []],
    [['package-lock.json'], [['npm', 'ci']]],
    [['pnpm-lock.yaml', 'package-lock.json'], [['pnpm', 'install', '--frozen-lockfile']]],
    [
      ['mise.toml', 'pnpm-lock.yaml'],
      [
        ['mise', 'install'],
        ['pnpm', 'install', '--frozen-lockfile'],
      ],
    ],
    [['.mise.toml'], [['mise', 'install']]],
  ])('infers from %j', (files, steps) => {
    expect(inferSetup(new Set(files)).steps).toEqual(steps);
  });
});

describe('git credentials', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir('lorenz-cred-');
  });
  afterEach(async () => {
    await removeTempDir(dir);
  });

  it('takes a directory of host files as it is (a mounted Secret)', async () => {
    const secret = join(dir, 'secret');
    await mkdir(join(secret, '..2026_11_30'), { recursive: true });
    await writeFile(join(secret, 'github.com'), 'ghp_token1\n');
    await writeFile(join(secret, 'gitlab.example.com'), 'oauth2:glpat-token2');
    const credentials = await loadGitCredentials(secret);
    expect(credentials.directory).toBe(secret);
    expect(credentials.hosts).toEqual(['github.com', 'gitlab.example.com']);
    expect(await credentialSecrets(credentials)).toEqual(['ghp_token1', 'glpat-token2']);
  });

  it('copies a credential-store file into a private directory, removed by dispose', async () => {
    const file = join(dir, 'store');
    await writeFile(
      file,
      '# mine\nhttps://alice:s3cr%40t@Git.Example.com\nhttps://bob:other@git.example.com\nhttps://x:y@github.com:8443/path\n',
    );
    const credentials = await loadGitCredentials(file);
    expect(credentials.hosts).toEqual(['git.example.com', 'github.com']);
    expect((await stat(credentials.directory)).mode & 0o777).toBe(0o700);
    expect(await readFile(join(credentials.directory, 'git.example.com'), 'utf8')).toBe(
      'alice:s3cr@t\n',
    );
    await credentials.dispose();
    await expect(stat(credentials.directory)).rejects.toThrow();
  });

  it.each([
    ['http://a:b@host', 'only https credentials are used'],
    ['https://host', 'has no token'],
    ['not a url', 'not a credential-store line'],
  ])('refuses the store line %j', async (line, why) => {
    const file = join(dir, 'store');
    await writeFile(file, `${line}\n`);
    await expect(loadGitCredentials(file)).rejects.toThrow(
      `invalid_git_credentials: ${file}:1: ${why}`,
    );
  });

  it.each([
    ['ghp_token1\n', 'ghp_token1'],
    ['oauth2:glpat-token2', 'glpat-token2'],
    ['x-access-token:a:b', 'a:b'],
  ])(
    'reads the token of the host file %j (as the controller reads a Secret value)',
    (text, token) => {
      expect(secretToken(text)).toBe(token);
    },
  );

  it('parses one credential-store line into its host and secret', () => {
    expect(parseStoreLine('https://alice:s3cr%40t@Git.Example.com', 'here')).toEqual({
      host: 'git.example.com',
      secret: 'alice:s3cr@t',
    });
    expect(() => parseStoreLine('https://host', 'the Secret')).toThrow(
      'invalid_git_credentials: the Secret: has no token',
    );
  });

  it('refuses a directory entry that is not a host name, and a missing path', async () => {
    await writeFile(join(dir, 'GitHub.com'), 'x');
    await expect(loadGitCredentials(dir)).rejects.toThrow('named by its host, in lower case');
    await expect(loadGitCredentials(join(dir, 'nope'))).rejects.toThrow(
      /invalid_git_credentials: .*cannot be read/,
    );
  });

  describe('the credential helper', () => {
    async function ask(input: string, action = 'get'): Promise<string> {
      const helper = join(dir, 'helper');
      await writeFile(helper, credentialHelperScript(), { mode: 0o755 });
      const child = run(helper, [join(dir, 'hosts'), action]);
      // For `store` the helper exits without reading: the write may meet a closed pipe.
      const [{ stdout }] = await Promise.all([child, writeInput(child.child.stdin, input)]);
      return stdout;
    }
    beforeEach(async () => {
      await mkdir(join(dir, 'hosts'));
      await writeFile(join(dir, 'hosts', 'git.example.com'), 'tok-123\n');
      await writeFile(join(dir, 'hosts', 'gitlab.example.com'), 'oauth2:glpat-9');
    });

    it('answers https for a host with a file, whatever the port or case', async () => {
      expect(await ask('protocol=https\nhost=git.example.com\n\n')).toBe(
        'username=x-access-token\npassword=tok-123\n',
      );
      expect(await ask('protocol=https\nhost=GitLab.Example.com:8443\npath=a/b.git\n\n')).toBe(
        'username=oauth2\npassword=glpat-9\n',
      );
    });

    it.each([
      ['protocol=http\nhost=git.example.com\n\n', 'get'],
      ['protocol=https\nhost=evil.example.com\n\n', 'get'],
      ['protocol=https\nhost=git.example.com.evil.test\n\n', 'get'],
      ['protocol=https\nhost=../hosts/git.example.com\n\n', 'get'],
      ['protocol=https\nhost=git.example.com\n\n', 'store'],
    ])('gives nothing for %j (%s)', async (input, action) => {
      expect(await ask(input, action)).toBe('');
    });
  });
});
