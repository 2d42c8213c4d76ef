import { describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_PROMPT_TEMPLATE,
  effectivePromptTemplate,
  parseWorkflowContent,
} from '../../../src/workflow/front-matter.js';
import { eachNamedCase } from '../../support/cases.js';
import { failureOfSync } from '../../support/lorenz-errors.js';
import { UNSOUND_YAML } from '../../support/yaml-bomb.js';

describe('parseWorkflowContent', () => {
  eachNamedCase('%s', parseWorkflowContent, [
    [
      'splits at the first --- line and the next, trimming the body',
      '---\nagent:\n  max_turns: 3\n---\n\n  Do {{ issue.title }}.\n\n---\nmore\n\n',
      { frontMatter: { agent: { max_turns: 3 } }, body: 'Do {{ issue.title }}.\n\n---\nmore' },
    ],
    [
      'accepts CRLF line endings, a BOM and leading blank lines',
      '\uFEFF\r\n---\r\npolling:\r\n  interval_ms: 5\r\n---\r\nBody\r\n',
      { frontMatter: { polling: { interval_ms: 5 } }, body: 'Body' },
    ],
  ]);

  it.each([
    ['plain text', '  Just a prompt.\n\n', 'Just a prompt.'],
    ['a body with a later rule', 'Intro\n---\nrest\n', 'Intro\n---\nrest'],
    ['an empty file', '', ''],
  ])('treats a file without front matter as all body: %s', (_name, text, body) => {
    expect(parseWorkflowContent(text)).toEqual({ frontMatter: {}, body });
  });

  it.each([
    ['nothing', '---\n---\nBody'],
    ['only a comment', '---\n# no settings yet\n---\nBody'],
  ])('reads empty front matter (%s) as {}', (_name, text) => {
    expect(parseWorkflowContent(text)).toEqual({ frontMatter: {}, body: 'Body' });
  });

  it.each([
    ['a list', '---\n- a\n- b\n---\n', /not a list/],
    ['a scalar', '---\njust words\n---\n', /not a string/],
    ['a number', '---\n42\n---\n', /not a number/],
  ])('rejects front matter that is %s', (_name, text, message) => {
    const error = failureOfSync(() => parseWorkflowContent(text));
    expect(error.code).toBe('workflow_front_matter_not_a_map');
    expect(error.message).toMatch(message);
  });

  it('reports a YAML error with the line of the file', () => {
    const error = failureOfSync(() =>
      parseWorkflowContent('---\ntracker:\n  kind: memory\npolling: [1, 2\nagent: {}\n---\nBody'),
    );
    expect(error.code).toBe('workflow_parse_error');
    expect(error.message).toMatch(/^invalid YAML front matter at line 5, column 1: /);
    expect(error.detail).toMatchObject({ line: 5, column: 1 });
  });

  it.each(UNSOUND_YAML)(
    'reports %s as a YAML error, quickly and without a stack',
    (_name, yaml, reason) => {
      const started = performance.now();
      const error = failureOfSync(() => parseWorkflowContent(`---\n${yaml}\n---\nBody`));
      expect(performance.now() - started).toBeLessThan(1000);
      expect(error.code).toBe('workflow_parse_error');
      expect(error.message).toBe(`invalid YAML front matter: ${reason}`);
    },
  );

  it('reports duplicate keys as a YAML error', () => {
    const error = failureOfSync(() => parseWorkflowContent('---\na: 1\na: 2\n---\n'));
    expect(error.code).toBe('workflow_parse_error');
    expect(error.message).toBe(
      'invalid YAML front matter at line 3, column 1: Map keys must be unique',
    );
  });

  it('reads a file that opens with --- and never closes it as all body (a Markdown rule)', () => {
    expect(parseWorkflowContent('---\nagent:\n  max_turns: 3\n')).toEqual({
      frontMatter: {},
      body: '---\nagent:\n  max_turns: 3',
    });
  });

  it('ends a fence line at U+2028 too', () => {
    expect(parseWorkflowContent('---\nagent: {}\n---\u2028Body')).toEqual({
      frontMatter: { agent: {} },
      body: 'Body',
    });
  });

  it.each([
    ['null', '---\nnull\n---\n', /not null$/],
    ['~', '---\n~\n---\n', /not null$/],
    ['an ordered map', '---\n!!omap\n- a: 1\n---\n', /not an ordered map \(!!omap\)/],
    ['a set', '---\n!!set\n? a\n---\n', /not a set \(!!set\)/],
    ['binary data', '---\n!!binary aGVsbG8=\n---\n', /not binary data \(!!binary\)/],
    ['a timestamp', '---\n!!timestamp 2026-11-30\n---\n', /not a timestamp/],
    ['a value of an unknown tag', '---\n!lorenz/custom x\n---\n', /not a string/],
  ])('rejects front matter that is %s, printing nothing', (_name, text, message) => {
    const warn = vi.spyOn(process, 'emitWarning');
    const consoleWarn = vi.spyOn(console, 'warn');
    try {
      const error = failureOfSync(() => parseWorkflowContent(text));
      expect(error.code).toBe('workflow_front_matter_not_a_map');
      expect(error.message).toMatch(message);
      expect(warn).not.toHaveBeenCalled();
      expect(consoleWarn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      consoleWarn.mockRestore();
    }
  });
});

describe('effectivePromptTemplate', () => {
  it.each([[''], ['   '], ['\n\t\n']])('falls back to the default prompt for %j', (body) => {
    expect(effectivePromptTemplate(body)).toBe(DEFAULT_PROMPT_TEMPLATE);
  });

  it('keeps a non-blank body, trimmed', () => {
    expect(effectivePromptTemplate('\n Fix {{ issue.title }} \n')).toBe('Fix {{ issue.title }}');
  });

  it("is Lorenz's default prompt, word for word", () => {
    expect(DEFAULT_PROMPT_TEMPLATE).toBe(
      `You are working on an issue from the configured tracker.

Identifier: {{ issue.identifier }}
Title: {{ issue.title }}

Body:
{% if issue.description %}
{{ issue.description }}
{% else %}
No description provided.
{% endif %}
`,
    );
  });
});
