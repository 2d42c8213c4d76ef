// The bad-input corpus (test/fixtures/bad-input) and how a case becomes an object: shared by
// the integration test that applies it to a real apiserver and the unit test that runs the
// same admission rules offline, so both judge the very same objects.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Condition } from '../../src/api/index.js';

export const CORPUS = join(import.meta.dirname, '../fixtures/bad-input');

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface ConditionExpectation {
  type: string;
  status: Condition['status'];
  reason: string;
  message: string;
}

export interface Fill {
  path: string;
  char: string;
  length: number;
  /** true: a list of `length` strings; `containers`/`volumes`: that many named entries. */
  list?: true | 'containers' | 'volumes';
}

export interface CorpusCase {
  name: string;
  kind?: 'Workflow' | 'IssueRun';
  patch?: Json;
  object?: JsonObject;
  fill?: Fill[];
  update?: Json;
  code?: string;
  workflowMd?: string;
  run?: JsonObject;
  expect: {
    admission?: string;
    condition?: ConditionExpectation;
    run?: { reason: string; message: string };
  };
}

export interface LoadedCase extends CorpusCase {
  file: string;
}

/** The cases of the corpus files, in file order, each with the file it is from. */
export async function loadCorpus(
  only: (file: string) => boolean = (file) => file.endsWith('.yaml'),
): Promise<LoadedCase[]> {
  const files = (await readdir(CORPUS)).filter(only).sort();
  const cases: LoadedCase[] = [];
  for (const file of files) {
    const list = parse(await readFile(join(CORPUS, file), 'utf8')) as CorpusCase[];
    cases.push(...list.map((entry) => ({ ...entry, file })));
  }
  return cases;
}

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 7386: objects merge, null removes, anything else replaces. */
export function mergePatch(target: Json, patch: Json | undefined): Json {
  if (patch === undefined) return target;
  if (!isObject(patch)) return patch;
  const result: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key] ?? null, value);
  }
  return result;
}

/** Puts a generated value at a dotted path (numeric segments index lists). */
function applyFill(object: JsonObject, fill: Fill): void {
  const segments = fill.path.split('.');
  const last = segments.pop() ?? '';
  let node: Json = object;
  for (const segment of segments) {
    const container: JsonObject | Json[] = node as JsonObject | Json[];
    const key = Array.isArray(container) ? Number(segment) : segment;
    const next = (container as Record<string | number, Json | undefined>)[key];
    if (next === undefined || next === null) {
      (container as Record<string | number, Json>)[key] = {};
    }
    node = (container as Record<string | number, Json>)[key] ?? null;
  }
  const indexes = Array.from({ length: fill.length }, (_, index) => index);
  const value: Json =
    fill.list === true
      ? indexes.map((index) => `${fill.char}${index}`)
      : fill.list === 'containers'
        ? indexes.map((index) => ({ name: `${fill.char}${index}`, image: 'x' }))
        : fill.list === 'volumes'
          ? indexes.map((index) => ({ name: `${fill.char}${index}`, emptyDir: {} }))
          : fill.char.repeat(fill.length);
  (node as Record<string | number, Json>)[Array.isArray(node) ? Number(last) : last] = value;
}

/** A Workflow no run starts from: IssueRuns of the corpus point at it. */
export const PARKED = 'parked';

export const VALID_MD = '---\ntracker:\n  kind: memory\n---\nWork on {{ issue.identifier }}.';

/** A valid object of `kind`, which a case patches or fills into a bad one. */
export function baseObject(kind: 'Workflow' | 'IssueRun', name: string): JsonObject {
  if (kind === 'Workflow') {
    return {
      apiVersion: 'lorenz.dev/v1alpha1',
      kind,
      metadata: { name },
      spec: {
        workflow: VALID_MD,
        podTemplate: { spec: { containers: [{ name: 'agent', image: 'lorenz-test/agent:1' }] } },
      },
    };
  }
  return {
    apiVersion: 'lorenz.dev/v1alpha1',
    kind,
    metadata: { name },
    spec: {
      workflowRef: { name: PARKED },
      issue: { identifier: 'ENG-1', title: 'Bad input', state: 'Todo' },
    },
  };
}

/** The object a case stands for: its own `object`, or the base object patched and filled. */
export function buildObject(entry: CorpusCase, name: string): JsonObject {
  const kind = entry.kind ?? 'Workflow';
  const object = (entry.object ?? mergePatch(baseObject(kind, name), entry.patch)) as JsonObject;
  for (const fill of entry.fill ?? []) applyFill(object, fill);
  return object;
}
