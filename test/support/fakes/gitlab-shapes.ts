// The shapes GitLab documents for the answers the code host reads
// (test/fixtures/gitlab/documented-shapes.json, from GitLab's API docs) as a checker: does an
// answer of the stand-in match the schema of its operation and status? Error statuses share
// one documented error shape. The OpenAPI excerpt (openapi-excerpt.json) adds what GitLab's
// published description covers: the header the token travels in.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';

type Json = Record<string, unknown>;

export interface DocumentedOperation {
  method: string;
  path: string;
  doc: string;
  section: string;
  responses: Record<string, Json>;
}

interface Shapes {
  definitions: Record<string, Json>;
  operations: DocumentedOperation[];
}

interface Excerpt {
  securityDefinitions: Record<string, { type: string; name: string; in: string }>;
}

const FIXTURES = new URL('../../fixtures/gitlab/', import.meta.url);

const readJson = <T>(name: string): T =>
  JSON.parse(readFileSync(fileURLToPath(new URL(name, FIXTURES)), 'utf8')) as T;

let loaded: { shapes: Shapes; ajv: Ajv } | undefined;
const compiled = new Map<string, ValidateFunction>();

function load(): { shapes: Shapes; ajv: Ajv } {
  if (loaded !== undefined) return loaded;
  const shapes = readJson<Shapes>('documented-shapes.json');
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema({ $id: 'gitlab', definitions: shapes.definitions });
  loaded = { shapes, ajv };
  return loaded;
}

export function documentedOperations(): DocumentedOperation[] {
  return load().shapes.operations;
}

/** The header GitLab's OpenAPI description names for a token: PRIVATE-TOKEN. */
export function documentedTokenHeader(): string {
  const excerpt = readJson<Excerpt>('openapi-excerpt.json');
  const header = Object.values(excerpt.securityDefinitions).find((item) => item.in === 'header');
  if (header === undefined) throw new Error('the OpenAPI excerpt names no token header');
  return header.name;
}

/** Rewrites `#/definitions/x` to the shared schema's id, so each operation compiles alone. */
function rooted(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rooted);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' ? `gitlab${value}` : rooted(value),
    ]),
  );
}

/**
 * What is wrong with an answer, by the documented shape of its operation and status; [] when
 * it fits. A 2xx status the docs do not list for the operation is itself a problem.
 */
export function checkAnswer(method: string, path: string, status: number, body: unknown): string[] {
  const { shapes, ajv } = load();
  const operation = shapes.operations.find((item) => item.method === method && item.path === path);
  if (operation === undefined) return [`${method} ${path} is not a documented operation`];
  const key = `${method} ${path} ${status}`;
  let validate = compiled.get(key);
  if (validate === undefined) {
    const schema =
      status >= 400
        ? { $ref: '#/definitions/error' }
        : (operation.responses[String(status)] ?? null);
    if (schema === null) {
      // A text answer (a job trace) has no JSON schema; any other status is undocumented.
      return Object.keys(operation.responses).length === 0
        ? []
        : [`status ${status} is not documented for ${method} ${path}`];
    }
    validate = ajv.compile(rooted(schema) as Json);
    compiled.set(key, validate);
  }
  if (validate(body)) return [];
  return (validate.errors ?? []).map(
    (error) => `${error.instancePath || '(root)'} ${error.message ?? 'does not fit'}`,
  );
}
