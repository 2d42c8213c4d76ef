import { describe, expect, it } from 'vitest';
import type { ApprovalsConfig } from '../../../src/workflow/approvals-config.js';
import {
  MAX_TESTED_TEXT,
  compilePattern,
  normalizePath,
} from '../../../src/workflow/approvals-pattern.js';
import {
  type ApprovalFacts,
  decideApproval,
  ruleMatches,
} from '../../../src/workflow/approvals-policy.js';
import { parseConfig } from '../../../src/workflow/config.js';
import { eachCase, eachNamedCase } from '../../support/cases.js';

/** The policy as WORKFLOW.md would give it: through the parser, so patterns are compiled. */
const policy = (approvals: Record<string, unknown>): ApprovalsConfig =>
  parseConfig({ agent: { approvals } }).config.agent.approvals!;

const facts = (given: Partial<ApprovalFacts>): ApprovalFacts => ({
  toolKind: null,
  title: '',
  command: null,
  paths: [],
  ...given,
});

const oneRule = (rule: Record<string, unknown>) => policy({ rules: [{ action: 'deny', ...rule }] });

const matches = (rule: Record<string, unknown>, given: Partial<ApprovalFacts>) =>
  decideApproval(oneRule(rule), facts(given)).rule === 0;

describe('decideApproval', () => {
  it('with no rule, the default decides (allow unless set)', () => {
    expect(decideApproval(policy({}), facts({ toolKind: 'execute' }))).toEqual({
      action: 'allow',
      rule: null,
      reason: null,
    });
    expect(decideApproval(policy({ default: 'ask' }), facts({})).action).toBe('ask');
  });

  it('the first rule that matches decides, with its index and reason', () => {
    const config = policy({
      default: 'deny',
      rules: [
        { kind: 'read', action: 'allow' },
        { kind: 'execute', command: 'git push --force*', action: 'ask', reason: 'a person' },
        { kind: 'execute', command: 'git *', action: 'allow' },
        { action: 'deny', reason: 'nothing else' },
      ],
    });
    const cases: [Partial<ApprovalFacts>, string, number | null, string | null][] = [
      [{ toolKind: 'read', paths: ['/ws/a'] }, 'allow', 0, null],
      [{ toolKind: 'execute', command: 'git push --force origin main' }, 'ask', 1, 'a person'],
      [{ toolKind: 'execute', command: 'git status' }, 'allow', 2, null],
      [{ toolKind: 'execute', command: 'rm -rf /' }, 'deny', 3, 'nothing else'],
      [{ toolKind: 'edit', paths: ['/ws/a'] }, 'deny', 3, 'nothing else'],
    ];
    for (const [given, action, rule, reason] of cases) {
      expect(decideApproval(config, facts(given)), JSON.stringify(given)).toEqual({
        action,
        rule,
        reason,
      });
    }
  });

  it('a catch-all rule before a narrower one shadows it', () => {
    const config = policy({
      rules: [{ action: 'allow' }, { kind: 'execute', command: 'rm *', action: 'deny' }],
    });
    expect(decideApproval(config, facts({ toolKind: 'execute', command: 'rm -rf x' })).rule).toBe(
      0,
    );
  });
});

describe('rule matchers', () => {
  eachNamedCase('%s', matches, [
    // kinds
    ['one kind, same', { kind: 'execute' }, { toolKind: 'execute' }, true],
    ['one kind, other', { kind: 'execute' }, { toolKind: 'edit' }, false],
    ['a list of kinds', { kind: ['edit', 'delete'] }, { toolKind: 'delete' }, true],
    ['kinds compared trimmed, any case', { kind: 'execute' }, { toolKind: ' Execute ' }, true],
    ['a kind rule vs a call of no kind', { kind: 'other' }, { toolKind: null }, false],
    ['no kind: any kind', {}, { toolKind: 'switch_mode' }, true],
    // command globs: anchored, * crosses spaces and slashes
    [
      'command glob, prefix',
      { command: 'git push --force*' },
      { command: 'git push --force' },
      true,
    ],
    [
      'command glob, anchored at the start',
      { command: 'git push*' },
      { command: 'sudo git push' },
      false,
    ],
    [
      'command glob, anchored at the end',
      { command: 'git push' },
      { command: 'git push origin' },
      false,
    ],
    ['command glob, * crosses /', { command: 'cat */.env' }, { command: 'cat src/app/.env' }, true],
    [
      'command glob, * crosses newlines',
      { command: '*rm -rf*' },
      { command: 'cd x\nrm -rf y' },
      true,
    ],
    ['command glob, ? is one character', { command: 'ls -?' }, { command: 'ls -l' }, true],
    ['command glob, ? is not two', { command: 'ls -?' }, { command: 'ls -la' }, false],
    ['command glob, a class', { command: 'terraform [ad]*' }, { command: 'terraform apply' }, true],
    [
      'command glob, a negated class',
      { command: 'terraform [!ad]*' },
      { command: 'terraform apply' },
      false,
    ],
    ['command glob, a range', { command: 'make [a-c]*' }, { command: 'make build' }, true],
    ['command glob, an escaped *', { command: 'echo \\*' }, { command: 'echo *' }, true],
    [
      'command glob, an escaped * is literal',
      { command: 'echo \\*' },
      { command: 'echo hi' },
      false,
    ],
    ['command glob, case-sensitive', { command: 'git push*' }, { command: 'GIT PUSH' }, false],
    [
      'a command rule vs a call without a command',
      { command: '*' },
      { title: 'x', command: null },
      false,
    ],
    ['a command rule vs an empty command', { command: '*' }, { command: '' }, true],
    ['command glob, ] first in a class is itself', { command: 'a[]]b' }, { command: 'a]b' }, true],
    ['command glob, an escape in a class', { command: 'a[\\-x]b' }, { command: 'a-b' }, true],
    ['command glob, a class matches /', { command: 'a[/]b' }, { command: 'a/b' }, true],
    // regexes: unanchored unless anchored, flags apply
    [
      'command regex, unanchored',
      { command: '/terraform\\s+apply/' },
      { command: 'cd infra && terraform  apply' },
      true,
    ],
    [
      'command regex, anchored',
      { command: '/^terraform apply$/' },
      { command: 'terraform apply -auto' },
      false,
    ],
    ['command regex, flag i', { command: '/git push/i' }, { command: 'GIT PUSH' }, true],
    ['command regex, no flag i', { command: '/git push/' }, { command: 'GIT PUSH' }, false],
    ['command regex, flag s lets . cross lines', { command: '/a.b/s' }, { command: 'a\nb' }, true],
    ['command regex, without s . stops at lines', { command: '/a.b/' }, { command: 'a\nb' }, false],
    ['command regex, flag m anchors lines', { command: '/^rm /m' }, { command: 'ls\nrm x' }, true],
    // titles
    ['title glob', { title: 'Run *' }, { title: 'Run npm test' }, true],
    ['title regex', { title: '/deploy/i' }, { title: 'Deploy to prod' }, true],
    ['title glob, other', { title: 'Run *' }, { title: 'Read x' }, false],
    // paths: * stops at /, ** crosses, **/ is zero or more directories
    ['path **/.env, nested', { path: '**/.env' }, { paths: ['/work/ws/app/.env'] }, true],
    ['path **/.env, top', { path: '**/.env' }, { paths: ['.env'] }, true],
    ['path **/.env, not a suffix', { path: '**/.env' }, { paths: ['/ws/.env.example'] }, false],
    ['path * stops at /', { path: 'src/*.ts' }, { paths: ['src/a/b.ts'] }, false],
    ['path * within a segment', { path: 'src/*.ts' }, { paths: ['src/b.ts'] }, true],
    ['path /**/ matches no directory', { path: 'src/**/b.ts' }, { paths: ['src/b.ts'] }, true],
    ['path /**/ matches directories', { path: 'src/**/b.ts' }, { paths: ['src/x/y/b.ts'] }, true],
    [
      'path /** is everything below',
      { path: '/etc/**' },
      { paths: ['/etc/ssh/sshd_config'] },
      true,
    ],
    ['path /** is not the directory itself', { path: '/etc/**' }, { paths: ['/etc'] }, false],
    ['path ? does not match /', { path: 'a?b' }, { paths: ['a/b'] }, false],
    ['path ** mid-segment crosses /', { path: '/ws/**.pem' }, { paths: ['/ws/keys/id.pem'] }, true],
    ['path .env is any .env', { path: '.env' }, { paths: ['/ws/app/.env'] }, true],
    ['path *.pem, any depth', { path: '*.pem' }, { paths: ['/ws/keys/id.pem'] }, true],
    [
      'path with no /, not a directory name',
      { path: 'keys' },
      { paths: ['/ws/keys/id.pem'] },
      false,
    ],
    ['path relative glob, at any depth', { path: 'src/*.ts' }, { paths: ['/ws/src/a.ts'] }, true],
    [
      'path relative glob, * still stops at /',
      { path: 'src/*.ts' },
      { paths: ['/ws/src/x/a.ts'] },
      false,
    ],
    [
      'path relative glob, whole segments only',
      { path: 'src/*.ts' },
      { paths: ['/ws/mysrc/a.ts'] },
      false,
    ],
    [
      'path relative dir/** is inside it',
      { path: 'keys/**' },
      { paths: ['/ws/keys/id.pem'] },
      true,
    ],
    ['path absolute glob is anchored', { path: '/src/*.ts' }, { paths: ['/ws/src/a.ts'] }, false],
    ['path relative fact, relative glob', { path: '.env' }, { paths: ['.env'] }, true],
    ['path absolute glob', { path: '/etc/passwd' }, { paths: ['/etc/passwd'] }, true],
    [
      'path normalized: . and ..',
      { path: '**/secrets/*' },
      { paths: ['/ws/src/../secrets/./k'] },
      true,
    ],
    ['path normalized: doubled slashes', { path: '/ws/.env' }, { paths: ['/ws//.env'] }, true],
    ['path normalized: a trailing slash', { path: '/ws/cache' }, { paths: ['/ws/cache/'] }, true],
    ['path: any path of the call', { path: '**/.env' }, { paths: ['/ws/a.ts', '/ws/.env'] }, true],
    ['path: a call with no paths', { path: '**' }, { paths: [] }, false],
    ['path regex', { path: '/\\.env$/i' }, { paths: ['/ws/.ENV'] }, true],
    // every matcher must match
    [
      'kind and command, both',
      { kind: 'execute', command: 'git *' },
      { toolKind: 'execute', command: 'git x' },
      true,
    ],
    [
      'kind and command, kind differs',
      { kind: 'edit', command: 'git *' },
      { toolKind: 'execute', command: 'git x' },
      false,
    ],
    ['no matcher: everything', {}, { toolKind: 'fetch', title: 'anything' }, true],
  ]);

  it('ruleMatches agrees with decideApproval', () => {
    const [rule] = oneRule({ kind: 'execute', command: 'make *' }).rules;
    expect(ruleMatches(rule!, facts({ toolKind: 'execute', command: 'make all' }))).toBe(true);
    expect(ruleMatches(rule!, facts({ toolKind: 'execute', command: 'npm ci' }))).toBe(false);
  });
});

describe('hostile input', () => {
  it('many stars against a long text that almost matches end quickly', () => {
    const pattern = compilePattern('*a*a*a*a*a*a*a*a*a*a*a*a*b', 'command');
    const started = performance.now();
    expect(pattern.test('a'.repeat(MAX_TESTED_TEXT))).toBe(false);
    expect(pattern.test(`${'a'.repeat(1000)}b`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('a path glob of many ** against deep paths ends quickly', () => {
    const pattern = compilePattern('**/a/**/a/**/a/**/a/**/b', 'path');
    const started = performance.now();
    expect(pattern.test('/a'.repeat(5000))).toBe(false);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('only the first MAX_TESTED_TEXT characters are tested', () => {
    const pattern = compilePattern('*tail', 'command');
    expect(pattern.test(`${'x'.repeat(MAX_TESTED_TEXT - 4)}tail`)).toBe(true);
    expect(pattern.test(`${'x'.repeat(MAX_TESTED_TEXT)}tail`)).toBe(false);
  });

  it('a call whose fields are huge is decided, not hung', () => {
    const config = policy({
      rules: [
        { kind: 'execute', command: '/git\\s+push/', action: 'ask' },
        { path: '**/.env', action: 'deny' },
      ],
    });
    const huge = 'x '.repeat(1_000_000);
    const started = performance.now();
    expect(
      decideApproval(
        config,
        facts({ toolKind: 'execute', title: huge, command: huge, paths: [huge] }),
      ),
    ).toEqual({ action: 'allow', rule: null, reason: null });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('characters are code points: ? matches one emoji', () => {
    expect(compilePattern('say ?', 'title').test('say 🎉')).toBe(true);
  });

  it('a regex is stateless between tests (no g or y flag is allowed)', () => {
    const pattern = compilePattern('/push/i', 'command');
    expect([pattern.test('git push'), pattern.test('git push'), pattern.test('git push')]).toEqual([
      true,
      true,
      true,
    ]);
  });

  it.each([
    ['/etc/passwd', 'a glob: passwd is not all flag letters', '/etc/passwd', true],
    ['/\\.env$/i', 'a regex with flag i', '/ws/.ENV', true],
  ])('%s is %s', (source, _what, text, expected) => {
    expect(compilePattern(source, 'path').test(text)).toBe(expected);
  });
});

describe('normalizePath', () => {
  eachCase('%s is %s', normalizePath, [
    ['/a/b/../c', '/a/c'],
    ['/../a', '/a'],
    ['a/./b//c/', 'a/b/c'],
    ['../a', '../a'],
    ['', '.'],
    ['/', '/'],
  ]);
});
