// Admission offline (src/api/admission.ts, src/api/cel.ts): the CRDs' CEL rules evaluated
// here, and every case of the bad-input corpus that the real apiserver refuses at creation
// (test/integration/bad-input.test.ts) refused here too, so `lorenz workflow validate`
// says what `kubectl apply` would.
import { describe, expect, it } from 'vitest';
import { admissionProblems, crdRules } from '../../../src/api/admission.js';
import { CelSyntaxError, compileCelRule } from '../../../src/api/cel.js';
import { baseObject, buildObject, loadCorpus } from '../../support/bad-input-corpus.js';

describe('the CEL rules of the CRDs', () => {
  it('are all understood by the offline evaluator', () => {
    const rules = crdRules();
    expect(rules.length).toBeGreaterThan(20);
    for (const rule of rules) expect(() => compileCelRule(rule), rule).not.toThrow();
  });

  it.each([
    ['has(self.workflow) != has(self.workflowFrom)', { workflow: 'x' }, true],
    ['has(self.workflow) != has(self.workflowFrom)', { workflow: 'x', workflowFrom: {} }, false],
    ['has(self.workflow) != has(self.workflowFrom)', {}, false],
    ["self.type in ['RuntimeDefault', 'Localhost']", { type: 'Localhost' }, true],
    ["self.type in ['RuntimeDefault', 'Localhost']", { type: 'Unconfined' }, false],
    ['!self', true, false],
    ['self != 0', 0, false],
    ['size(self) == 0', ['NET_ADMIN'], false],
    [
      '!has(self.sources) || self.sources.all(s, !has(s.serviceAccountToken))',
      { sources: [{ configMap: {} }] },
      true,
    ],
    [
      '!has(self.sources) || self.sources.all(s, !has(s.serviceAccountToken))',
      { sources: [{ serviceAccountToken: {} }] },
      false,
    ],
    ["!(self in ['workspace'])", 'workspace', false],
    // JSON's whole numbers are CEL ints, as for the apiserver's `type: integer` fields.
    ['self > 0', -5, false],
    ['self + 1 == 2', 1, true],
  ])('%s on %j is %s', (rule, self, expected) => {
    expect(compileCelRule(rule).holds(self)).toBe(expected);
  });

  it('tells a transition rule (it reads oldSelf) from the others', () => {
    expect(compileCelRule('self == oldSelf').transition).toBe(true);
    expect(compileCelRule('!self').transition).toBe(false);
  });

  it.each(['self ==', 'nope == 1', "'a' + 1 == 'a1'", 'size(self)'])(
    'refuses %s, which CEL does not compile (syntax, name, overload, not a bool), by name',
    (rule) => {
      expect(() => compileCelRule(rule)).toThrow(CelSyntaxError);
    },
  );
});

const refusedAtCreation = (
  await loadCorpus((file) => ['admission-workflow.yaml', 'admission-issuerun.yaml'].includes(file))
).filter((entry) => entry.update === undefined && entry.expect.admission !== undefined);

describe('admission offline', () => {
  it.each(['Workflow', 'IssueRun'] as const)('lets a valid %s through', (kind) => {
    expect(admissionProblems(kind, baseObject(kind, 'bad-input'))).toEqual([]);
  });

  it.each(refusedAtCreation)('$file: refuses "$name"', (entry) => {
    expect(
      admissionProblems(entry.kind ?? 'Workflow', buildObject(entry, 'bad-input')),
    ).not.toEqual([]);
  });
});

describe('admission offline: string patterns', () => {
  it.each([
    ['Team_Q', [`should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' (it is "Team_Q")`]],
    ['-q', [`should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' (it is "-q")`]],
    ['team-q', []],
  ])('spec.queueName %j: %j', (queueName, messages) => {
    const workflow = {
      apiVersion: 'lorenz.dev/v1alpha1',
      kind: 'Workflow',
      metadata: { name: 'queued' },
      spec: {
        workflow: '---\ntracker:\n  kind: memory\n---\nWork.',
        podTemplate: { spec: { containers: [{ name: 'agent', image: 'x' }] } },
        queueName,
      },
    };
    const problems = admissionProblems('Workflow', workflow);
    expect(problems.map((problem) => problem.message)).toEqual(messages);
    for (const problem of problems) expect(problem.path).toEqual(['spec', 'queueName']);
  });
});
