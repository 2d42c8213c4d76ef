import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { hookNeedsTemplating, renderHookCommand, shellEscape } from '../../../src/template/hook.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';
import { failureOfSync } from '../../support/lorenz-errors.js';
import { eachCase, eachNamedCase } from '../../support/cases.js';

const issue = normalizeIssue({
  identifier: 'ENG-1',
  title: `it's "$(touch pwned)" \`id\` $HOME\nnext line`,
  priority: 2,
  labels: ['Bug', 'needs tests'],
  branch_name: null,
});

/** Run one command through a real bash, as hooks run, and return what it printed. */
function bash(command: string): string {
  const result = spawnSync('bash', ['-c', command], { encoding: 'utf8', cwd: '/' });
  expect(result.stderr).toBe('');
  return result.stdout;
}

describe('hookNeedsTemplating', () => {
  eachCase('%j → %s', hookNeedsTemplating, [
    ['echo {{ issue.title }}', true],
    ['echo {{issue.title}}', true],
    ['echo {{- issue.title -}}', true],
    ['echo {{ issue["title"] }}', true],
    ['{% if issue.labels.size > 0 %}echo x{% endif %}', true],
    ['{%- for l in issue.labels -%}{{ l }}{%- endfor -%}', true],
    ['echo {{ "x" | append: issue.title }}', true],
    ['echo {{ issue.title', true],
    ['echo plain', false],
    ['echo issue.title', false],
    ['echo {{ issue }}', false],
    ['echo {{ tissue.title }}', false],
    ['echo {{ other }} issue.title', false],
    ["awk '{{print $1}}' issue.txt", false],
    ['echo {% raw %} issue {% endraw %}', false],
    ['', false],
  ]);
});

describe('renderHookCommand passes through', () => {
  it.each([
    ['no template', 'echo {{ not liquid', issue],
    ['a stray unclosed tag', "awk '{{print $1}}' {%", issue],
    ['no issue', 'echo {{ issue.title }}', null],
    ['no issue, even a broken template', 'echo {{ issue.nope | zz', null],
  ])('verbatim: %s', (_name, command, subject) => {
    expect(renderHookCommand(command, subject)).toBe(command);
  });
});

describe('renderHookCommand escaping', () => {
  it('quotes every interpolation as one shell word, by default', () => {
    const command = renderHookCommand('printf %s {{ issue.title }}', issue);
    expect(command).toBe(`printf %s 'it'\\''s "$(touch pwned)" \`id\` $HOME\nnext line'`);
    expect(bash(command)).toBe(issue.title);
  });

  it.each([
    ['null', '{{ issue.branch_name }}', `''`, ''],
    ['number', '{{ issue.priority }}', `'2'`, '2'],
    ['boolean', '{{ issue.assigned_to_worker }}', `'true'`, 'true'],
    ['array', '{{ issue.labels }}', `'bug,needs tests'`, 'bug,needs tests'],
    ['filtered', '{{ issue.identifier | downcase }}', `'eng-1'`, 'eng-1'],
    ['default', '{{ issue.branch_name | default: issue.identifier }}', `'ENG-1'`, 'ENG-1'],
  ])('%s values', (_name, template, word, printed) => {
    const command = renderHookCommand(`printf '[%s]' ${template}`, issue);
    expect(command).toBe(`printf '[%s]' ${word}`);
    expect(bash(command)).toBe(`[${printed}]`);
  });

  eachNamedCase('%s', (hook: string) => bash(renderHookCommand(hook, issue)), [
    [
      'escapes each output inside loops',
      "{% for l in issue.labels %}printf '<%s>' {{ l }}; {% endfor %}",
      '<bug><needs tests>',
    ],
    [
      'renders a multi-line hook as bash runs it',
      'set -euo pipefail\nbranch={{ issue.branch_name | default: issue.identifier }}\nprintf %s "$branch"',
      'ENG-1',
    ],
  ]);

  it('| raw really is unescaped', () => {
    const arithmetic = normalizeIssue({ identifier: 'A', title: '$((6 * 7))' });
    const command = renderHookCommand('echo {{ issue.title | raw }}', arithmetic);
    expect(command).toBe('echo $((6 * 7))');
    expect(bash(command)).toBe('42\n');
  });

  it('| shell_escape is not escaped a second time', () => {
    const command = renderHookCommand('printf %s {{ issue.title | shell_escape }}', issue);
    expect(command).toBe(`printf %s ${shellEscape(issue.title)}`);
    expect(bash(command)).toBe(issue.title);
    const labels = renderHookCommand('printf %s {{ issue.labels | shell_escape }}', issue);
    expect(labels).toBe(`printf %s 'bug,needs tests'`);
  });
});

describe('renderHookCommand errors', () => {
  it('an unknown issue field is a render error with the Liquid message', () => {
    const error = failureOfSync(() => renderHookCommand(': {{ issue.nope }}', issue));
    expect(error.code).toBe('template_render_error');
    expect(error.message).toBe('undefined variable: issue.nope, line:1, col:6');
    expect(error.detail?.template).toBe(': {{ issue.nope }}');
  });

  it.each([['attempt'], ['ensemble.size']])('%s is not in hook scope', (name) => {
    const error = failureOfSync(() =>
      renderHookCommand(`echo {{ issue.title }} {{ ${name} }}`, issue),
    );
    expect(error.code).toBe('template_render_error');
    expect(error.message).toMatch(/^undefined variable: (attempt|ensemble), line:1, col:\d+$/);
  });

  it('an unknown filter is a parse error', () => {
    const error = failureOfSync(() => renderHookCommand('echo {{ issue.title | shout }}', issue));
    expect(error.code).toBe('template_parse_error');
    expect(error.message).toBe('undefined filter: shout, line:1, col:6');
  });

  it('a broken tag is a parse error', () => {
    const error = failureOfSync(() => renderHookCommand('{% if issue.title %}echo', issue));
    expect(error.code).toBe('template_parse_error');
    expect(error.message).toMatch(/not closed/);
  });
});

describe('shellEscape', () => {
  it.each([
    ['', `''`],
    ['plain', `'plain'`],
    ["it's", `'it'\\''s'`],
    ["''", `''\\'''\\'''`],
    ['a b\nc', `'a b\nc'`],
  ])('%j → %s', (value, quoted) => {
    expect(shellEscape(value)).toBe(quoted);
    expect(bash(`printf %s ${quoted}`)).toBe(value);
  });
});
