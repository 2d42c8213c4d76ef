// No template may pin a process: both engines stop a parse that is too long, a render that
// takes too long, and a render that allocates too much, with an error that names the limit.
import { describe, expect, it } from 'vitest';
import { renderHookCommand } from '../../../src/template/hook.js';
import { TEMPLATE_LIMITS } from '../../../src/template/limits.js';
import { renderPrompt, soloEnsemble } from '../../../src/template/prompt.js';
import { isLorenzError } from '../../../src/workflow/errors.js';
import { normalizeIssue } from '../../../src/workflow/issue.js';

const issue = normalizeIssue({ identifier: 'ENG-1', title: 'limits' });
const engines = {
  prompt: (template: string) =>
    renderPrompt(template, { issue, attempt: null, ensemble: soloEnsemble() }),
  // A hook is a template only where it mentions the issue.
  hook: (template: string) => renderHookCommand(`echo {{ issue.identifier }}; ${template}`, issue),
};

const cases: Array<[string, string, RegExp]> = [
  [
    'a range too large to build',
    '{% for i in (1..100000000) %}x{% endfor %}',
    /^memory alloc limit exceeded.*: a template may allocate at most 10000000 units/,
  ],
  [
    'doubling a string',
    '{% assign a = "xxxxxxxxxx" %}{% for i in (1..40) %}{% assign a = a | append: a %}{% endfor %}{{ a | size }}',
    /^memory alloc limit exceeded/,
  ],
  [
    'nested loops that run for minutes',
    '{% for i in (1..1000) %}{% for j in (1..1000) %}{% for k in (1..1000) %}x{% endfor %}{% endfor %}{% endfor %}',
    /^template render limit exceeded.*: a template may render for at most 1000 ms/,
  ],
  [
    'a template longer than the parse limit',
    'x'.repeat(TEMPLATE_LIMITS.parseLimit + 1),
    /^parse length limit exceeded: a template may have at most 262144 characters/,
  ],
];

/** CPU milliseconds (user and system) this process spent since `started`. */
function cpuMs(started: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 1000;
}

describe.each(Object.entries(engines))('the %s engine', (_engine, render) => {
  it('parses and renders a tag-dense template just under the parse limit in bounded time', () => {
    // liquidjs's parse grows faster than the text: the cap must keep the worst case short.
    const unit =
      '{% if issue.title %}{{ issue.title | upcase }}{% endif %} {{ issue.identifier }}\n';
    const template = unit.repeat(Math.floor((TEMPLATE_LIMITS.parseLimit - 100) / unit.length));
    const started = process.cpuUsage();
    expect(render(template).length).toBeGreaterThan(0);
    // About 0.7 s of CPU on this 2-core machine. CPU time, not the wall clock: a machine loaded
    // by parallel suites (load 14 seen) stretched the wall clock past any fair bound, while
    // the CPU the render takes stays what it is. The bound catches a cap grown large enough to
    // hold a controller for tens of seconds (the figure itself is a benchmark's business).
    expect(cpuMs(started)).toBeLessThan(10_000);
  });

  it.each(cases)('stops %s, naming the limit', (_case, template, message) => {
    const started = process.cpuUsage();
    let caught: unknown;
    try {
      render(template);
    } catch (error) {
      caught = error;
    }
    expect(isLorenzError(caught), String(caught)).toBe(true);
    expect((caught as Error).message).toMatch(message);
    expect(cpuMs(started)).toBeLessThan(5000);
  });
});
