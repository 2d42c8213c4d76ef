import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  continuationPrompt,
  ensembleContext,
  parsePromptTemplate,
  renderPrompt,
  soloEnsemble,
} from '../../../src/template/prompt.js';
import { DEFAULT_PROMPT_TEMPLATE } from '../../../src/workflow/front-matter.js';
import { type Issue, normalizeIssue } from '../../../src/workflow/issue.js';
import { loadWorkflowFile } from '../../../src/template/load-workflow.js';
import { failureOfSync } from '../../support/lorenz-errors.js';

const issue = normalizeIssue({ identifier: 'ENG-7', title: 'Fix login' });
const solo = { issue, attempt: null, ensemble: soloEnsemble() };

function render(template: string, context: Partial<typeof solo> = {}): string {
  return renderPrompt(template, { ...solo, ...context });
}

describe('renderPrompt context', () => {
  it('exposes issue, attempt and ensemble with solo defaults', () => {
    expect(
      render(
        '{{ issue.identifier }}|{{ attempt }}|{{ ensemble.enabled }}|{{ ensemble.slot_index }}|{{ ensemble.size }}',
      ),
    ).toBe('ENG-7||false|0|1');
    expect(soloEnsemble()).toEqual({ enabled: false, slot_index: 0, size: 1 });
  });

  it('describes ensemble slots', () => {
    expect(ensembleContext(2, 3)).toEqual({ enabled: true, slot_index: 2, size: 3 });
    expect(ensembleContext(0, 1)).toEqual(soloEnsemble());
    const template =
      '{% if ensemble.enabled %}slot {{ ensemble.slot_index | plus: 1 }} of {{ ensemble.size }}{% endif %}';
    expect(render(template, { ensemble: ensembleContext(1, 4) })).toBe('slot 2 of 4');
    expect(render(template)).toBe('');
  });

  it('renders every snake_case issue key; nulls render empty', () => {
    const keys = [
      'id',
      'identifier',
      'title',
      'description',
      'priority',
      'state',
      'state_type',
      'branch_name',
      'url',
      'assignee_id',
      'blocked_by',
      'labels',
      'assigned_to_worker',
      'created_at',
      'updated_at',
    ];
    const template = keys.map((key) => `${key}=[{{ issue.${key} }}]`).join(' ');
    expect(render(template)).toBe(
      'id=[] identifier=[ENG-7] title=[Fix login] description=[] priority=[] state=[] state_type=[] ' +
        'branch_name=[] url=[] assignee_id=[] blocked_by=[] labels=[] assigned_to_worker=[true] ' +
        'created_at=[] updated_at=[]',
    );
  });

  it('defaults assigned_to_worker to true when the issue leaves it undefined', () => {
    const loose = { ...issue, assigned_to_worker: undefined } as unknown as Issue;
    expect(render('{{ issue.assigned_to_worker }}', { issue: loose })).toBe('true');
    const unassigned = normalizeIssue({ identifier: 'A', title: 't', assigned_to_worker: false });
    expect(render('{{ issue.assigned_to_worker }}', { issue: unassigned })).toBe('false');
  });

  it('gives blocked_by entries all four keys, null when unknown', () => {
    const blocked = normalizeIssue({
      identifier: 'A',
      title: 't',
      blocked_by: [{ identifier: 'B-1' }, { id: 'x', state: 'Todo', state_type: 'unstarted' }],
    });
    const template =
      '{% for b in issue.blocked_by %}[{{ b.id }}|{{ b.identifier }}|{{ b.state | default: "?" }}|{{ b.state_type }}]{% endfor %}';
    expect(render(template, { issue: blocked })).toBe('[|B-1|?|][x||Todo|unstarted]');
  });

  it('puts nothing else in scope', () => {
    for (const name of ['user', 'env', 'process', 'config', 'globalThis', 'issue.constructor']) {
      expect(failureOfSync(() => render(`{{ ${name} }}`)).code).toBe('template_render_error');
    }
  });

  it('cannot read files through include or render', () => {
    const error = failureOfSync(() => render("{% include '/etc/hostname' %}"));
    expect(error.code).toBe('template_render_error');
  });
});

describe('strict mode', () => {
  it.each([
    ['{{ issue.titel }}', 'undefined variable: issue.titel, line:1, col:4'],
    ['Hi\n  {{ user.name }}', 'undefined variable: user, line:2, col:6'],
    ['{{ issue.summary | default: "x" }}', 'undefined variable: issue.summary, line:1, col:4'],
  ])('a typo in %j is a render error', (template, message) => {
    const error = failureOfSync(() => render(template));
    expect(error.code).toBe('template_render_error');
    expect(error.message).toBe(message);
    expect(error.detail?.template).toBe(template);
  });

  it('an unregistered filter is a parse error', () => {
    const error = failureOfSync(() => render('{{ issue.title | shell_escape }}'));
    expect(error.code).toBe('template_parse_error');
    expect(error.message).toBe('undefined filter: shell_escape, line:1, col:1');
  });

  it('a syntax error is a parse error carrying the template', () => {
    const template = 'Fix {% if issue.title %} it';
    const error = failureOfSync(() => parsePromptTemplate(template));
    expect(error.code).toBe('template_parse_error');
    expect(error.detail).toEqual({ template });
  });
});

describe('Liquid features', () => {
  const rich = normalizeIssue({
    identifier: 'ENG-9',
    title: 'make the login page faster than it is today',
    priority: 2,
    labels: ['Bug', 'needs-tests'],
  });

  it.each([
    ['{{ issue.title | upcase | truncate: 13 }}', 'MAKE THE L...'],
    ['{{ issue.branch_name | default: "from " | append: issue.identifier }}', 'from ENG-9'],
    ['{{ issue.priority | plus: 1 }}', '3'],
    ['{{ issue.labels | join: "+" }}', 'bug+needs-tests'],
    ['{{ issue.labels.size }}', '2'],
    ['{% if issue.labels contains "needs-tests" %}yes{% endif %}', 'yes'],
    [
      '{% for l in issue.labels %}{{ forloop.index }}/{{ forloop.length }}:{{ l }}{% unless forloop.last %},{% endunless %}{% endfor %}',
      '1/2:bug,2/2:needs-tests',
    ],
    ['{% if issue.description %}d{% else %}none{% endif %}', 'none'],
  ])('%s', (template, expected) => {
    expect(render(template, { issue: rich })).toBe(expected);
  });

  it('reuses the parse of an identical template', () => {
    const template = 'cached {{ issue.title }}';
    expect(parsePromptTemplate(template)).toBe(parsePromptTemplate(template));
  });
});

describe('the default prompt', () => {
  it('renders with and without a description', () => {
    expect(render(DEFAULT_PROMPT_TEMPLATE)).toBe(
      'You are working on an issue from the configured tracker.\n\nIdentifier: ENG-7\nTitle: Fix login\n\nBody:\n\nNo description provided.\n\n',
    );
    const described = normalizeIssue({ identifier: 'A-1', title: 'T', description: 'Do it.' });
    expect(render(DEFAULT_PROMPT_TEMPLATE, { issue: described })).toContain('Body:\n\nDo it.\n');
  });
});

describe("the worked example of Lorenz's prompt documentation", () => {
  it('renders a full context', async () => {
    const workflow = await loadWorkflowFile(
      join(import.meta.dirname, '../../fixtures/workflows/worked-example.md'),
    );
    const blocked = normalizeIssue({
      identifier: 'ENG-7',
      title: 'Fix login',
      state: 'Todo',
      description: 'Users cannot log in.',
      labels: ['Needs-Tests'],
      blocked_by: [{ identifier: 'ENG-3', state: 'In Progress' }, { id: 'x' }],
    });
    expect(
      renderPrompt(workflow.promptTemplate, {
        issue: blocked,
        attempt: 2,
        ensemble: ensembleContext(1, 3),
      }),
    ).toBe(
      'You are working ENG-7: Fix login.\n\nState: Todo (unknown)\nLink: n/a\n\n\n## Task\nUsers cannot log in.\n\n\n\n' +
        '## Blocked by\n\n- ENG-3 (In Progress)\n\n-  (unknown state)\n\nDo not assume blockers are resolved.\n\n\n\n' +
        'This issue is labeled needs-tests. Add or update tests before finishing.\n\n\n\n' +
        'You are slot 2 of 3. Take an approach the other\nslots are unlikely to take.\n\n\n\n' +
        'This is retry attempt 2. Review why the prior attempt did not land before retrying.\n',
    );
  });

  it('renders the inline memory issue solo, on its first attempt', async () => {
    const workflow = await loadWorkflowFile(
      join(import.meta.dirname, '../../fixtures/workflows/worked-example.md'),
    );
    const [first] = workflow.config.tracker.issues;
    expect(first).toBeDefined();
    const prompt = renderPrompt(workflow.promptTemplate, {
      issue: first as Issue,
      attempt: null,
      ensemble: soloEnsemble(),
    });
    expect(prompt).toBe(
      'You are working ENG-7: Fix login.\n\nState:  (unknown)\nLink: n/a\n\n\n' +
        'No description was provided. Scope the work from the title.\n\n\n\n\n\n\n\n\n',
    );
  });
});

describe('continuationPrompt', () => {
  it("is Lorenz's text with the turn numbers filled in", () => {
    expect(continuationPrompt(3, 20)).toBe(
      `Continuation guidance:

- The previous agent turn completed normally, but the issue is still in an active state.
- This is continuation turn #3 of 20 for the current agent run.
- Resume from the current workspace and workpad state instead of restarting from scratch.
- The original task instructions and prior turn context are already present in this thread, so do not restate them before acting.
- Focus on the remaining ticket work and do not end the turn while the issue stays active unless you are truly blocked.
`,
    );
  });
});
