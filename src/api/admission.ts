import { CelRuntimeError, compileCelRule, type CelRule } from './cel.js';
import { API_VERSION, ISSUERUN_KIND, WORKFLOW_KIND } from './constants.js';
import { buildCrds } from './crd.js';
import type { JSONSchemaProps } from './structural.js';

/**
 * What the apiserver's admission says about a Workflow or IssueRun, offline: the object
 * checked against the openAPIV3Schema of its CRD as buildCrds() makes it from the zod
 * schemas (the one source of crds/*.yaml) — types, bounds, enums, required fields, unknown
 * fields (which `kubectl apply` refuses: it validates strictly), duplicate keys of map
 * lists — and the CEL rules the CRD carries, but for transition rules (they compare with
 * the object being replaced, so they only apply to updates). The metadata is checked as
 * the apiserver does for every object: a name that is a DNS subdomain.
 */

/** One refusal: the path of the field (`['spec', 'podTemplate', …]`) and why. */
export interface AdmissionProblem {
  path: (string | number)[];
  message: string;
}

export type LorenzKind = typeof WORKFLOW_KIND | typeof ISSUERUN_KIND;

let schemas: Map<string, JSONSchemaProps> | undefined;

function schemaOf(kind: LorenzKind): JSONSchemaProps {
  schemas ??= new Map(
    buildCrds().map((crd) => [
      crd.spec.names.kind,
      crd.spec.versions[0]?.schema.openAPIV3Schema ?? {},
    ]),
  );
  return schemas.get(kind) ?? {};
}

const compiled = new Map<string, CelRule>();
function rule(text: string): CelRule {
  let found = compiled.get(text);
  if (!found) {
    found = compileCelRule(text);
    compiled.set(text, found);
  }
  return found;
}

/** Every CEL rule of both CRDs, for the test that each one is understood here. */
export function crdRules(): string[] {
  const rules: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'x-kubernetes-validations') {
        for (const entry of value as { rule: string }[]) rules.push(entry.rule);
      } else walk(value);
    }
  };
  walk(buildCrds());
  return rules;
}

const isMap = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  if (typeof value === 'string') return 'a string';
  return typeof value === 'object' ? 'a map' : `a ${typeof value}`;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a map',
};

const TYPE_TESTS: Record<string, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string',
  integer: (value) => typeof value === 'number' && Number.isInteger(value),
  number: (value) => typeof value === 'number',
  boolean: (value) => typeof value === 'boolean',
  array: Array.isArray,
  object: isMap,
};

const hasType = (value: unknown, type: string | undefined) =>
  type === undefined || (TYPE_TESTS[type]?.(value) ?? true);

type Path = (string | number)[];

const patterns = new Map<string, RegExp>();
/** A schema's `pattern`, compiled once: the same few patterns are asked of every object. */
function patternOf(source: string): RegExp {
  let compiled = patterns.get(source);
  if (!compiled) {
    compiled = new RegExp(source, 'u');
    patterns.set(source, compiled);
  }
  return compiled;
}

/** The bounds of one value of the right type. */
function boundProblems(schema: JSONSchemaProps, value: unknown): string[] {
  const problems: string[] = [];
  const number = (key: string) => {
    const bound = schema[key];
    return typeof bound === 'number' ? bound : undefined;
  };
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) {
    problems.push(`must be one of ${schema.enum.join(', ')}, not ${JSON.stringify(value)}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    const max = number('maxLength');
    const min = number('minLength');
    if (max !== undefined && length > max) {
      problems.push(`must be at most ${max} characters (it has ${length})`);
    }
    if (min !== undefined && length < min) {
      problems.push(min === 1 ? 'must not be empty' : `must be at least ${min} characters`);
    }
    // The CRDs' patterns are plain (anchors, classes, groups): RE2 and JavaScript agree on them.
    if (typeof schema.pattern === 'string' && !patternOf(schema.pattern).test(value)) {
      problems.push(`should match '${schema.pattern}' (it is ${JSON.stringify(value)})`);
    }
  }
  if (typeof value === 'number') {
    const max = number('maximum');
    const min = number('minimum');
    if (max !== undefined && value > max) problems.push(`must be at most ${max}`);
    if (min !== undefined && value < min) problems.push(`must be at least ${min}`);
    // An int64 field: JSON numbers beyond it do not decode.
    if (schema.type === 'integer' && !Number.isSafeInteger(value)) {
      problems.push('is out of the range of a 64-bit integer');
    }
  }
  if (Array.isArray(value)) {
    const max = number('maxItems');
    if (max !== undefined && value.length > max) {
      problems.push(`must have at most ${max} items (it has ${value.length})`);
    }
  }
  return problems;
}

/** Entries of an `x-kubernetes-list-type: map` list must differ in their keys. */
function listMapProblems(schema: JSONSchemaProps, list: unknown[], path: Path): AdmissionProblem[] {
  const keys = schema['x-kubernetes-list-map-keys'];
  if (schema['x-kubernetes-list-type'] !== 'map' || !Array.isArray(keys)) return [];
  const seen = new Set<string>();
  const problems: AdmissionProblem[] = [];
  list.forEach((item, index) => {
    if (!isMap(item)) return;
    const key = JSON.stringify(keys.map((name: string) => item[name]));
    if (seen.has(key)) {
      const shown = keys.map((name: string) => `${name} ${JSON.stringify(item[name])}`).join(', ');
      problems.push({ path: [...path, index], message: `a second entry with ${shown}` });
    }
    seen.add(key);
  });
  return problems;
}

/**
 * The rules on one node. `shapeless`: the value's own fields have schema problems, which
 * are reported already; a rule that then fails to evaluate says nothing more.
 */
function ruleProblems(
  schema: JSONSchemaProps,
  value: unknown,
  path: Path,
  shapeless: boolean,
): AdmissionProblem[] {
  const rules = schema['x-kubernetes-validations'];
  if (!Array.isArray(rules)) return [];
  const problems: AdmissionProblem[] = [];
  for (const entry of rules as { rule: string; message?: string }[]) {
    const compiledRule = rule(entry.rule);
    if (compiledRule.transition) continue;
    let holds: boolean;
    try {
      holds = compiledRule.holds(value);
    } catch (error) {
      if (!(error instanceof CelRuntimeError)) throw error;
      // The apiserver refuses an object whose rule cannot be evaluated, too.
      holds = shapeless;
    }
    if (!holds) problems.push({ path, message: entry.message ?? `failed rule: ${entry.rule}` });
  }
  return problems;
}

function check(schema: JSONSchemaProps, value: unknown, path: Path): AdmissionProblem[] {
  if (!hasType(value, schema.type)) {
    const expected = EXPECTED[schema.type ?? ''] ?? schema.type ?? 'a value';
    return [{ path, message: `must be ${expected}, not ${typeName(value)}` }];
  }
  const problems: AdmissionProblem[] = boundProblems(schema, value).map((message) => ({
    path,
    message,
  }));
  if (isMap(value)) problems.push(...objectProblems(schema, value, path));
  if (Array.isArray(value)) {
    problems.push(...listMapProblems(schema, value, path));
    if (schema.items) {
      const items = schema.items;
      value.forEach((item, index) => problems.push(...present(items, item, [...path, index])));
    }
  }
  problems.push(...ruleProblems(schema, value, path, problems.length > 0));
  return problems;
}

/** null in a field that is not nullable is pruned by the apiserver: as if absent. */
function present(schema: JSONSchemaProps, value: unknown, path: Path): AdmissionProblem[] {
  return value === null ? [] : check(schema, value, path);
}

function objectProblems(
  schema: JSONSchemaProps,
  value: Record<string, unknown>,
  path: Path,
): AdmissionProblem[] {
  const problems: AdmissionProblem[] = [];
  const properties = schema.properties ?? {};
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const [key, child] of Object.entries(value)) {
    const property = properties[key];
    if (property) problems.push(...present(property, child, [...path, key]));
    else if (isMap(schema.additionalProperties)) {
      problems.push(...present(schema.additionalProperties, child, [...path, key]));
    } else if (!preserve && schema.additionalProperties !== true) {
      problems.push({ path: [...path, key], message: 'unknown field' });
    }
  }
  for (const key of schema.required ?? []) {
    if (value[key] === undefined || value[key] === null) {
      problems.push({ path: [...path, key], message: 'is required' });
    }
  }
  return problems;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** A label value, and the name part of a label key (at most 63 characters each). */
const LABEL_PART = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** What the apiserver allows all annotations of an object together (keys and values). */
const MAX_ANNOTATIONS_BYTES = 262_144;

const dnsProblem = (text: unknown) =>
  typeof text !== 'string' || text.length > 253 || !DNS_SUBDOMAIN.test(text)
    ? `must be a lower-case DNS name (a-z, 0-9, '-', '.'; at most 253 characters), not ${JSON.stringify(text)}`
    : null;

function labelKeyValid(key: string): boolean {
  const slash = key.lastIndexOf('/');
  const prefix = slash === -1 ? null : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  if (prefix !== null && dnsProblem(prefix) !== null) return false;
  return name !== '' && name.length <= 63 && LABEL_PART.test(name);
}

function labelProblems(labels: unknown): AdmissionProblem[] {
  if (labels === undefined) return [];
  if (!isMap(labels)) return [{ path: ['metadata', 'labels'], message: 'must be a map' }];
  const problems: AdmissionProblem[] = [];
  for (const [key, value] of Object.entries(labels)) {
    const path = ['metadata', 'labels', key];
    if (!labelKeyValid(key)) {
      problems.push({ path, message: `the key ${JSON.stringify(key)} is not a label name` });
    }
    if (typeof value !== 'string' || value.length > 63 || !LABEL_PART.test(value)) {
      problems.push({
        path,
        message: `must be a label value (at most 63 letters, digits, '-', '_', '.', starting and ending with a letter or digit), not ${JSON.stringify(value)}`,
      });
    }
  }
  return problems;
}

function annotationProblems(annotations: unknown): AdmissionProblem[] {
  if (annotations === undefined) return [];
  const path = ['metadata', 'annotations'];
  if (!isMap(annotations)) return [{ path, message: 'must be a map' }];
  const bytes = Object.entries(annotations).reduce(
    (sum, [key, value]) => sum + Buffer.byteLength(key) + Buffer.byteLength(String(value)),
    0,
  );
  return bytes > MAX_ANNOTATIONS_BYTES
    ? [
        {
          path,
          message: `must be at most ${MAX_ANNOTATIONS_BYTES} bytes in all (they are ${bytes})`,
        },
      ]
    : [];
}

function metadataProblems(metadata: unknown): AdmissionProblem[] {
  if (!isMap(metadata)) {
    return [
      { path: ['metadata'], message: metadata === undefined ? 'is required' : 'must be a map' },
    ];
  }
  const { name, generateName, namespace } = metadata;
  const problems: AdmissionProblem[] = [];
  if (name === undefined && generateName === undefined) {
    problems.push({ path: ['metadata', 'name'], message: 'is required' });
  }
  // generateName is a prefix: the apiserver appends 5 characters, so a trailing - is fine.
  const prefix = typeof generateName === 'string' ? generateName.replace(/-$/, '') : generateName;
  for (const [key, text] of [
    ['name', name],
    ['generateName', prefix],
    ['namespace', namespace],
  ] as const) {
    const problem = text === undefined ? null : dnsProblem(text);
    if (problem !== null) problems.push({ path: ['metadata', key], message: problem });
  }
  problems.push(...labelProblems(metadata.labels), ...annotationProblems(metadata.annotations));
  return problems;
}

/** Every reason admission would refuse `object` (of a Lorenz kind) when it is created. */
export function admissionProblems(
  kind: LorenzKind,
  object: Record<string, unknown>,
): AdmissionProblem[] {
  const problems: AdmissionProblem[] = [];
  if (object.apiVersion !== API_VERSION) {
    problems.push({
      path: ['apiVersion'],
      message: `must be ${API_VERSION}, not ${JSON.stringify(object.apiVersion)}`,
    });
  }
  problems.push(...metadataProblems(object.metadata));
  const root = schemaOf(kind);
  // metadata is the apiserver's own (above); status is not written by a create.
  const { metadata: _metadata, status: _status, ...rest } = object;
  const properties = { ...(root.properties ?? {}) };
  delete properties.metadata;
  delete properties.status;
  problems.push(...objectProblems({ ...root, properties }, rest, []));
  return problems;
}
