import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/workflow/config.js';
import { LorenzError } from '../../../src/workflow/errors.js';
import { parseWorkflowContent } from '../../../src/workflow/front-matter.js';
import { problemsOf } from './config-problems.js';

/** WORKFLOW.md text whose front matter has `agent.budget` with these indented lines. */
function workflowWith(budgetLines: string[]): string {
  return [
    '---',
    'agent:',
    '  budget:',
    ...budgetLines.map((line) => `    ${line}`),
    '---',
    'prompt',
  ].join('\n');
}

const load = (text: string) => parseConfig(parseWorkflowContent(text).frontMatter);

const problems = (budget: unknown) => problemsOf({ agent: { budget } });

describe('agent.budget', () => {
  it('reads every key from WORKFLOW.md front matter into config.agent.budget', () => {
    const { config, warnings } = load(
      workflowWith([
        'attempt: { tokens: 200000 }',
        'run: { tokens: 1000000, cost: 2.5 }',
        'issue: { cost: "2.50" }',
        'day: { tokens: 5000000, cost: 40 }',
        'warn_ratio: 0.9',
        'time_zone: Europe/Paris',
      ]),
    );
    expect(warnings).toEqual([]);
    expect(config.agent.budget).toEqual({
      attempt: { tokens: 200_000 },
      run: { tokens: 1_000_000, cost: '2.5' },
      issue: { cost: '2.50' },
      day: { tokens: 5_000_000, cost: '40' },
      warnRatio: 0.9,
      timeZone: 'Europe/Paris',
    });
  });

  it('keeps a cost as a decimal string whether written as a number or a string', () => {
    const budget = load(workflowWith(['run: { cost: 2.5 }', 'day: { cost: "2.50" }'])).config.agent
      .budget;
    expect(budget?.run?.cost).toBe('2.5');
    expect(budget?.day?.cost).toBe('2.50');
    expect(typeof budget?.run?.cost).toBe('string');
  });

  it.each([
    ['absent', undefined],
    ['empty (`budget:`)', null],
  ])('is null when %s: no limit', (_name, budget) => {
    const raw = budget === undefined ? { agent: { kind: 'codex' } } : { agent: { budget } };
    expect(parseConfig(raw).config.agent.budget).toBeNull();
  });

  it('leaves warn_ratio and time_zone unset when not written (defaults come at merge)', () => {
    expect(parseConfig({ agent: { budget: { run: { tokens: 10 } } } }).config.agent.budget).toEqual(
      { run: { tokens: 10 } },
    );
  });

  it.each<[string, unknown, string, RegExp]>([
    ['tokens 0', { attempt: { tokens: 0 } }, 'agent.budget.attempt.tokens', /at least 1/],
    ['tokens "many"', { run: { tokens: 'many' } }, 'agent.budget.run.tokens', /whole number/],
    ['tokens 1.5', { run: { tokens: 1.5 } }, 'agent.budget.run.tokens', /whole number/],
    ['cost -1', { run: { cost: -1 } }, 'agent.budget.run.cost', /positive amount.*-1/],
    ['cost "abc"', { issue: { cost: 'abc' } }, 'agent.budget.issue.cost', /positive amount.*"abc"/],
    ['cost 0', { day: { cost: 0 } }, 'agent.budget.day.cost', /more than 0/],
    ['cost "0.00"', { day: { cost: '0.00' } }, 'agent.budget.day.cost', /more than 0/],
    [
      'an unknown limit key',
      { attempt: { tokns: 5 } },
      'agent.budget.attempt.tokns',
      /unknown key \(known: tokens, cost\)/,
    ],
    [
      'an unknown budget key',
      { foo: 1, run: { tokens: 5 } },
      'agent.budget.foo',
      /unknown key \(known: attempt, run, issue, day, warn_ratio, time_zone\)/,
    ],
    ['warn_ratio 1.5', { warn_ratio: 1.5 }, 'agent.budget.warn_ratio', /less than 1/],
    ['warn_ratio 0', { warn_ratio: 0 }, 'agent.budget.warn_ratio', /more than 0/],
    [
      'time_zone "Mars/Olympus"',
      { time_zone: 'Mars/Olympus' },
      'agent.budget.time_zone',
      /unknown time zone "Mars\/Olympus"/,
    ],
    ['a scope with neither tokens nor cost', { day: {} }, 'agent.budget.day', /set tokens, cost/],
    ['a budget that is not a map', 'lots', 'agent.budget', /must be a map/],
  ])('refuses %s, naming the path', (_name, budget, path, rule) => {
    const found = problems(budget);
    expect(found.map((problem) => problem.path)).toContain(path);
    expect(found.find((problem) => problem.path === path)?.rule).toMatch(rule);
  });

  it('names the path in the error message itself', () => {
    try {
      load(workflowWith(['attempt: { tokens: 0 }']));
      expect.unreachable('the config should be refused');
    } catch (error) {
      expect(error).toBeInstanceOf(LorenzError);
      expect((error as LorenzError).message).toContain('agent.budget.attempt.tokens');
    }
  });
});
