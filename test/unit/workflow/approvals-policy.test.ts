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
    // a command rule, a call without a command or with an empty one
    [
      'a command rule vs a call without a command',
      { command: '*' },
      { title: 'x', command: null },
      false,
    ],
    ['a command rule vs an empty command', { command: '*' }, { command: '' }, true],
    // titles
    ['title glob', { title: 'Run *' }, { title: 'Run npm test' }, true],
    ['title regex', { title: '/deploy/i' }, { title: 'Deploy to prod' }, true],
    ['title glob, other', { title: 'Run *' }, { title: 'Read x' }, false],
    // a path rule against a call's several paths, or none
    ['path: any path of the call', { path: '**/.env' }, { paths: ['/ws/a.ts', '/ws/.env'] }, true],
    ['path: a call with no paths', { path: '**' }, { paths: [] }, false],
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

  /** A rule of one command pattern against a call of one command. */
  const commandMatches = (pattern: string, command: string) =>
    matches({ command: pattern }, { command });

  eachNamedCase('%s', commandMatches, [
    // globs: anchored, * crosses spaces and slashes
    ['command glob, prefix', 'git push --force*', 'git push --force', true],
    ['command glob, anchored at the start', 'git push*', 'sudo git push', false],
    ['command glob, anchored at the end', 'git push', 'git push origin', false],
    ['command glob, * crosses /', 'cat */.env', 'cat src/app/.env', true],
    ['command glob, * crosses newlines', '*rm -rf*', 'cd x\nrm -rf y', true],
    ['command glob, ? is one character', 'ls -?', 'ls -l', true],
    ['command glob, ? is not two', 'ls -?', 'ls -la', false],
    ['command glob, a class', 'terraform [ad]*', 'terraform apply', true],
    ['command glob, a negated class', 'terraform [!ad]*', 'terraform apply', false],
    ['command glob, a range', 'make [a-c]*', 'make build', true],
    ['command glob, an escaped *', 'echo \\*', 'echo *', true],
    ['command glob, an escaped * is literal', 'echo \\*', 'echo hi', false],
    ['command glob, case-sensitive', 'git push*', 'GIT PUSH', false],
    ['command glob, ] first in a class is itself', 'a[]]b', 'a]b', true],
    ['command glob, an escape in a class', 'a[\\-x]b', 'a-b', true],
    ['command glob, a class matches /', 'a[/]b', 'a/b', true],
    // regexes: unanchored unless anchored, flags apply
    ['command regex, unanchored', '/terraform\\s+apply/', 'cd infra && terraform  apply', true],
    ['command regex, anchored', '/^terraform apply$/', 'terraform apply -auto', false],
    ['command regex, flag i', '/git push/i', 'GIT PUSH', true],
    ['command regex, no flag i', '/git push/', 'GIT PUSH', false],
    ['command regex, flag s lets . cross lines', '/a.b/s', 'a\nb', true],
    ['command regex, without s . stops at lines', '/a.b/', 'a\nb', false],
    ['command regex, flag m anchors lines', '/^rm /m', 'ls\nrm x', true],
  ]);

  /** A rule of one path pattern against a call of one path. */
  const pathMatches = (pattern: string, path: string) =>
    matches({ path: pattern }, { paths: [path] });

  eachNamedCase('%s', pathMatches, [
    // * stops at /, ** crosses, **/ is zero or more directories
    ['path **/.env, nested', '**/.env', '/work/ws/app/.env', true],
    ['path **/.env, top', '**/.env', '.env', true],
    ['path **/.env, not a suffix', '**/.env', '/ws/.env.example', false],
    ['path * stops at /', 'src/*.ts', 'src/a/b.ts', false],
    ['path * within a segment', 'src/*.ts', 'src/b.ts', true],
    ['path /**/ matches no directory', 'src/**/b.ts', 'src/b.ts', true],
    ['path /**/ matches directories', 'src/**/b.ts', 'src/x/y/b.ts', true],
    ['path /** is everything below', '/etc/**', '/etc/ssh/sshd_config', true],
    ['path /** is not the directory itself', '/etc/**', '/etc', false],
    ['path ? does not match /', 'a?b', 'a/b', false],
    ['path ** mid-segment crosses /', '/ws/**.pem', '/ws/keys/id.pem', true],
    ['path .env is any .env', '.env', '/ws/app/.env', true],
    ['path *.pem, any depth', '*.pem', '/ws/keys/id.pem', true],
    ['path with no /, not a directory name', 'keys', '/ws/keys/id.pem', false],
    ['path relative glob, at any depth', 'src/*.ts', '/ws/src/a.ts', true],
    ['path relative glob, * still stops at /', 'src/*.ts', '/ws/src/x/a.ts', false],
    ['path relative glob, whole segments only', 'src/*.ts', '/ws/mysrc/a.ts', false],
    ['path relative dir/** is inside it', 'keys/**', '/ws/keys/id.pem', true],
    ['path absolute glob is anchored', '/src/*.ts', '/ws/src/a.ts', false],
    ['path relative fact, relative glob', '.env', '.env', true],
    ['path absolute glob', '/etc/passwd', '/etc/passwd', true],
    ['path normalized: . and ..', '**/secrets/*', '/ws/src/../secrets/./k', true],
    ['path normalized: doubled slashes', '/ws/.env', '/ws//.env', true],
    ['path normalized: a trailing slash', '/ws/cache', '/ws/cache/', true],
    ['path regex', '/\\.env$/i', '/ws/.ENV', true],
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
