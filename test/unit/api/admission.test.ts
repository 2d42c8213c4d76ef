// Admission offline (src/api/admission.ts, src/api/cel.ts): the CRDs' CEL rules evaluated
// here, and every case of the bad-input corpus that the real apiserver refuses at creation
// (test/integration/bad-input.test.ts) refused here too, so `lorenz workflow validate`
// says what `kubectl apply` would.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { admissionProblems, crdRules } from '../../../src/api/admission.js';
import { CelSyntaxError, compileCelRule } from '../../../src/api/cel.js';

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

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface CorpusCase {
  name: string;
  kind?: 'Workflow' | 'IssueRun';
  patch?: Json;
  object?: JsonObject;
  fill?: { path: string; char: string; length: number; list?: true | 'containers' | 'volumes' }[];
  update?: Json;
  expect: { admission?: string };
}

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 7386, as the integration test applies the corpus. */
function mergePatch(target: Json, patch: Json | undefined): Json {
  if (patch === undefined) return target;
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key] ?? null, value);
  }
  return result;
}

function applyFill(object: JsonObject, fill: NonNullable<CorpusCase['fill']>[number]): void {
  const segments = fill.path.split('.');
  const last = segments.pop() ?? '';
  let node = object as Record<string, Json>;
  for (const segment of segments) {
    const key = Array.isArray(node) ? Number(segment) : segment;
    node[key] ??= {};
    node = node[key] as Record<string, Json>;
  }
  const indexes = Array.from({ length: fill.length }, (_, index) => index);
  node[Array.isArray(node) ? Number(last) : last] =
    fill.list === true
      ? indexes.map((index) => `${fill.char}${index}`)
      : fill.list === 'containers'
        ? indexes.map((index) => ({ name: `${fill.char}${index}`, image: 'x' }))
        : fill.list === 'volumes'
          ? indexes.map((index) => ({ name: `${fill.char}${index}`, emptyDir: {} }))
          : fill.char.repeat(fill.length);
}

function base(kind: 'Workflow' | 'IssueRun'): JsonObject {
  const spec: JsonObject =
    kind === 'Workflow'
      ? {
          workflow: '---\ntracker:\n  kind: memory\n---\nWork on {{ issue.identifier }}.',
          podTemplate: { spec: { containers: [{ name: 'agent', image: 'lorenz-test/agent:1' }] } },
        }
      : {
          workflowRef: { name: 'parked' },
          issue: { identifier: 'ENG-1', title: 'Bad input', state: 'Todo' },
        };
  return { apiVersion: 'lorenz.dev/v1alpha1', kind, metadata: { name: 'bad-input' }, spec };
}

const CORPUS = join(import.meta.dirname, '../../fixtures/bad-input');
const refusedAtCreation = ['admission-workflow.yaml', 'admission-issuerun.yaml'].flatMap((file) =>
  (parse(readFileSync(join(CORPUS, file), 'utf8')) as CorpusCase[])
    .filter((entry) => entry.update === undefined && entry.expect.admission !== undefined)
    .map((entry) => ({ ...entry, file })),
);

describe('admission offline', () => {
  it.each(['Workflow', 'IssueRun'] as const)('lets a valid %s through', (kind) => {
    expect(admissionProblems(kind, base(kind))).toEqual([]);
  });

  it.each(refusedAtCreation)('$file: refuses "$name"', (entry) => {
    const kind = entry.kind ?? 'Workflow';
    const object = (entry.object ?? mergePatch(base(kind), entry.patch)) as JsonObject;
    for (const fill of entry.fill ?? []) applyFill(object, fill);
    expect(admissionProblems(kind, object)).not.toEqual([]);
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
