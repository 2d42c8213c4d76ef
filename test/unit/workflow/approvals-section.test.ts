import { describe, expect, it } from 'vitest';
import { APPROVALS_DEFAULTS } from '../../../src/workflow/approvals-config.js';
import { MAX_PATTERN_LENGTH } from '../../../src/workflow/approvals-pattern.js';
import { type ConfigProblem, configProblems, parseConfig } from '../../../src/workflow/config.js';
import { LorenzError } from '../../../src/workflow/errors.js';
import { parseWorkflowContent } from '../../../src/workflow/front-matter.js';
import { problemsOf } from './config-problems.js';

const withApprovals = (approvals: unknown) => parseConfig({ agent: { approvals } });
const approvalsOf = (approvals: unknown) => withApprovals(approvals).config.agent.approvals;

const problems = (approvals: unknown) => problemsOf({ agent: { approvals } });

const rule = (fields: Record<string, unknown>) => ({ rules: [{ action: 'ask', ...fields }] });

describe('agent.approvals', () => {
  it('is null when absent: every permission is approved as before', () => {
    expect(parseConfig({ agent: { kind: 'codex' } }).config.agent.approvals).toBeNull();
  });

  it.each([
    ['an empty section (`approvals:`)', null],
    ['an empty map', {}],
  ])('%s opts in with every default', (_name, approvals) => {
    const { config, warnings } = withApprovals(approvals);
    expect(config.agent.approvals).toEqual({
      default: APPROVALS_DEFAULTS.default,
      rules: [],
      approvers: [],
      timeoutMs: APPROVALS_DEFAULTS.timeoutMs,
      onTimeout: APPROVALS_DEFAULTS.onTimeout,
      steering: APPROVALS_DEFAULTS.steering,
      pollIntervalMs: APPROVALS_DEFAULTS.pollIntervalMs,
      asksPerMinute: APPROVALS_DEFAULTS.asksPerMinute,
    });
    expect(warnings).toEqual([]);
  });

  it('reads every key of the brief, from WORKFLOW.md front matter', () => {
    const text = [
      '---',
      'agent:',
      '  approvals:',
      '    default: deny',
      '    rules:',
      '      - kind: execute',
      '        command: "git push --force*"',
      '        action: ask',
      '        reason: force pushes need a person',
      '      - kind: [read, edit]',
      '        path: "**/.env"',
      '        action: deny',
      '      - title: "/^Fetch /i"',
      '        action: allow',
      '    approvers: [alice@example.com, "1234", " Bob "]',
      '    timeout_ms: 600000',
      '    on_timeout: allow',
      '    steering: true',
      '    poll_interval_ms: "2000"',
      '    asks_per_minute: 3',
      '---',
      'prompt',
    ].join('\n');
    const { config, warnings } = parseConfig(parseWorkflowContent(text).frontMatter);
    expect(warnings).toEqual([]);
    const approvals = config.agent.approvals!;
    expect({ ...approvals, rules: undefined }).toEqual({
      default: 'deny',
      rules: undefined,
      approvers: ['alice@example.com', '1234', 'Bob'],
      timeoutMs: 600_000,
      onTimeout: 'allow',
      steering: true,
      pollIntervalMs: 2000,
      asksPerMinute: 3,
    });
    const [force, env, fetch] = approvals.rules;
    expect(force).toMatchObject({
      index: 0,
      kinds: ['execute'],
      action: 'ask',
      reason: 'force pushes need a person',
      title: null,
      path: null,
    });
    expect(force?.command?.source).toBe('git push --force*');
    expect(force?.command?.test('git push --force-with-lease origin main')).toBe(true);
    expect(force?.command?.test('git push origin main')).toBe(false);
    expect(env).toMatchObject({ index: 1, kinds: ['read', 'edit'], action: 'deny', reason: null });
    expect(env?.path?.test('/work/ws/.env')).toBe(true);
    expect(fetch).toMatchObject({ index: 2, kinds: null, action: 'allow' });
    expect(fetch?.title?.test('fetch https://example.com')).toBe(true);
  });

  it('a rule with no matcher at all is kept: it matches everything', () => {
    const [only] = approvalsOf({ rules: [{ action: 'deny' }] })!.rules;
    expect(only).toEqual({
      index: 0,
      kinds: null,
      title: null,
      command: null,
      path: null,
      action: 'deny',
      reason: null,
    });
  });

  const PATTERN = 'must be a non-empty pattern (a glob, or /regex/flags)';
  // [case, agent.approvals, the key of the one problem under agent.approvals, its rule]
  it.each<[string, unknown, string, ConfigProblem['rule']]>([
    ['not a map', 'ask', '', 'must be a map'],
    [
      'an unknown key (an error: a misspelt approvers would let anyone answer)',
      { aprovers: ['alice'] },
      'aprovers',
      expect.stringMatching(/^unknown key \(known: default, rules, approvers,/),
    ],
    ['a bad default', { default: 'maybe' }, 'default', 'must be one of "allow", "deny", "ask"'],
    ['rules not a list', { rules: { action: 'ask' } }, 'rules', 'must be a list of rules'],
    ['a rule not a map', { rules: ['ask'] }, 'rules[0]', 'must be a map (a rule with an action)'],
    [
      'a rule with an unknown key (a rule without its command would match every call)',
      rule({ comand: 'rm *' }),
      'rules[0].comand',
      'unknown key (known: kind, command, title, path, action, reason)',
    ],
    [
      'a rule without an action',
      { rules: [{ kind: 'execute' }] },
      'rules[0].action',
      'is required: "allow", "deny" or "ask"',
    ],
    [
      'a bad action',
      { rules: [{ action: 'approve' }] },
      'rules[0].action',
      'must be one of "allow", "deny", "ask"',
    ],
    [
      'a kind not in the list',
      rule({ kind: 'shell' }),
      'rules[0].kind[0]',
      expect.stringMatching(/^must be one of "execute", "edit", .*"switch_mode", "other"$/),
    ],
    [
      'an empty list of kinds',
      rule({ kind: [] }),
      'rules[0].kind',
      'must name at least one tool kind',
    ],
    [
      'a kind of the wrong type',
      rule({ kind: 3 }),
      'rules[0].kind',
      'must be a tool kind or a list of them',
    ],
    ['an empty pattern', rule({ command: '' }), 'rules[0].command', PATTERN],
    ['a blank pattern', rule({ title: '   ' }), 'rules[0].title', PATTERN],
    ['a null pattern (`path:` with nothing)', rule({ path: null }), 'rules[0].path', PATTERN],
    ['a pattern not a string', rule({ command: ['git'] }), 'rules[0].command', PATTERN],
    [
      'a pattern too long',
      rule({ command: 'a'.repeat(MAX_PATTERN_LENGTH + 1) }),
      'rules[0].command',
      `must be at most ${MAX_PATTERN_LENGTH} characters`,
    ],
    [
      'an unclosed glob class',
      rule({ path: 'src/[abc' }),
      'rules[0].path',
      'invalid glob: "[" at 5 is not closed (write \\[ for a [): src/[abc',
    ],
    [
      'a backwards glob range',
      rule({ title: '[z-a]*' }),
      'rules[0].title',
      'invalid glob: the range z-a is backwards: [z-a]*',
    ],
    [
      'a glob ending in a lone backslash',
      rule({ command: 'echo \\' }),
      'rules[0].command',
      'invalid glob: it ends with a lone \\: echo \\',
    ],
    [
      'an empty regex',
      rule({ command: '//' }),
      'rules[0].command',
      'invalid regex //: it is empty',
    ],
    [
      'a regex with the g flag (test would keep state)',
      rule({ command: '/push/g' }),
      'rules[0].command',
      'invalid regex /push/g: flag g is not supported (use i, m, s, u or v)',
    ],
    [
      'a regex that can take exponential time',
      rule({ command: '/^(a+)+$/' }),
      'rules[0].command',
      'invalid regex /^(a+)+$/: a repeated group holds a repetition, which can take exponential time',
    ],
    ['a reason not a string', rule({ reason: 42 }), 'rules[0].reason', 'must be a string'],
    ['an empty reason', rule({ reason: ' ' }), 'rules[0].reason', 'must be a non-empty string'],
    ['approvers not a list', { approvers: 'alice' }, 'approvers', 'must be a list of strings'],
    [
      'an approver not a string',
      { approvers: ['alice', 1234] },
      'approvers[1]',
      'must be a string (quote a numeric user id: "1234")',
    ],
    ['an empty approver', { approvers: [''] }, 'approvers[0]', 'must be a non-empty string'],
    [
      'timeout_ms not positive',
      { timeout_ms: 0 },
      'timeout_ms',
      'must be a positive integer no greater than 2147483647',
    ],
    ['on_timeout ask', { on_timeout: 'ask' }, 'on_timeout', 'must be one of "allow", "deny"'],
    ['steering not a boolean', { steering: 'yes' }, 'steering', 'must be true or false'],
    [
      'poll_interval_ms under 1000',
      { poll_interval_ms: 999 },
      'poll_interval_ms',
      'must be an integer from 1000 to 2147483647',
    ],
    [
      'asks_per_minute 0',
      { asks_per_minute: 0 },
      'asks_per_minute',
      'must be an integer from 1 to 1000',
    ],
  ])('refuses %s, naming the key', (_name, approvals, key, message) => {
    const path = key === '' ? 'agent.approvals' : `agent.approvals.${key}`;
    expect(problems(approvals)).toEqual([{ path, rule: message }]);
  });

  it('names the rule whose regex does not compile, with why', () => {
    const approvals = {
      rules: [
        { action: 'allow' },
        { kind: 'read', action: 'deny' },
        { command: '/git (push/', action: 'ask' },
      ],
    };
    expect(problems(approvals)).toEqual([
      {
        path: 'agent.approvals.rules[2].command',
        rule: expect.stringMatching(/^invalid regex \/git \(push\/: .*Unterminated group/),
      },
    ]);
  });

  it('lists every problem of every rule at once, with those of other sections', () => {
    const error = (() => {
      try {
        parseConfig({
          agent: {
            max_turns: 0,
            approvals: {
              rules: [{ action: 'nope' }, { kind: 'x', action: 'ask', path: '' }],
              on_timeout: 'x',
            },
          },
        });
      } catch (caught) {
        return caught as LorenzError;
      }
      throw new Error('expected a failure');
    })();
    expect(
      configProblems(error)
        .map((problem) => problem.path)
        .sort(),
    ).toEqual([
      'agent.approvals.on_timeout',
      'agent.approvals.rules[0].action',
      'agent.approvals.rules[1].kind[0]',
      'agent.approvals.rules[1].path',
      'agent.max_turns',
    ]);
  });

  it('an agent section that is not a map is reported once', () => {
    try {
      parseConfig({ agent: 'codex' });
    } catch (error) {
      expect(configProblems(error as LorenzError)).toEqual([
        { path: 'agent', rule: 'must be a map' },
      ]);
      return;
    }
    throw new Error('expected a failure');
  });
});
