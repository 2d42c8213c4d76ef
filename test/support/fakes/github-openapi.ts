// GitHub's official OpenAPI description (npm @octokit/openapi, api.github.com) as a checker:
// is a request's path and query one the API documents, and does an answer match the schema
// the API documents for that operation and status? The description is OpenAPI 3.0, whose
// `nullable` JSON Schema does not know; it is rewritten into `type: [t, 'null']` (or an
// anyOf with null) before ajv compiles it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';

type Json = Record<string, unknown>;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Json;
}

export interface Operation {
  template: string;
  method: string;
  operationId: string;
  parameters: Parameter[];
  responses: Record<string, Json>;
  /** The documented JSON request body's schema, when the operation takes one. */
  requestSchema: Json | null;
}

interface Spec {
  paths: Record<string, Record<string, Json>>;
  components: {
    schemas: Record<string, Json>;
    parameters: Record<string, Parameter>;
    responses: Record<string, Json>;
    examples?: Record<string, Json>;
  };
}

const SCHEMA_ROOT = 'https://lorenz.test/github-openapi';

let loaded: { spec: Spec; ajv: Ajv } | undefined;
const compiled = new Map<string, ValidateFunction>();

const isMap = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** OpenAPI 3.0 → JSON Schema for ajv: `nullable`, and the annotation keys ajv would trip on. */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!isMap(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable' || key === 'example' || key === 'examples') continue;
    // Under `properties` the keys are property names, which may be `nullable` or `example`.
    out[key] =
      key === 'properties' && isMap(value)
        ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, toJsonSchema(sub)]))
        : toJsonSchema(value);
  }
  if (schema.nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
    return out;
  }
  return { anyOf: [out, { type: 'null' }] };
}

function load(): { spec: Spec; ajv: Ajv } {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  const path = require.resolve('@octokit/openapi/generated/api.github.com.json');
  const spec = JSON.parse(readFileSync(path, 'utf8')) as Spec;
  const ajv = new Ajv({ strict: false, validateFormats: false, validateSchema: false });
  ajv.addSchema({
    $id: SCHEMA_ROOT,
    components: { schemas: toJsonSchema(spec.components.schemas) },
  });
  loaded = { spec, ajv };
  return loaded;
}

function deref<T>(value: unknown, spec: Spec): T {
  if (isMap(value) && typeof value.$ref === 'string') {
    const [, , kind, name] = value.$ref.split('/');
    const section = spec.components[kind as keyof Spec['components']] as Record<string, unknown>;
    return section[name as string] as T;
  }
  return value as T;
}

function requestSchemaOf(requestBody: unknown, spec: Spec): Json | null {
  const body = deref<Json | undefined>(requestBody, spec);
  const content = isMap(body?.content) ? body.content['application/json'] : undefined;
  return isMap(content) && isMap(content.schema) ? content.schema : null;
}

/** The documented operation for a method and path, with the path's parameters, or null. */
export function findOperation(
  method: string,
  pathname: string,
): { operation: Operation; pathParams: Record<string, string> } | null {
  const { spec } = load();
  const segments = pathname.split('/');
  for (const [template, item] of Object.entries(spec.paths)) {
    const parts = template.split('/');
    if (parts.length !== segments.length) continue;
    const pathParams: Record<string, string> = {};
    const fits = parts.every((part, index) => {
      const segment = decodeURIComponent(segments[index] ?? '');
      const name = /^\{(.+)\}$/.exec(part)?.[1];
      if (name === undefined) return part === segment;
      pathParams[name] = segment;
      return segment !== '';
    });
    const raw = item[method.toLowerCase()];
    if (!fits || !isMap(raw)) continue;
    const parameters = ((raw.parameters as unknown[]) ?? []).map((p) => deref<Parameter>(p, spec));
    return {
      operation: {
        template,
        method: method.toLowerCase(),
        operationId: String(raw.operationId),
        parameters,
        responses: raw.responses as Record<string, Json>,
        requestSchema: requestSchemaOf(raw.requestBody, spec),
      },
      pathParams,
    };
  }
  return null;
}

function valueFits(value: string, schema: Json | undefined): boolean {
  if (schema === undefined) return true;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value)) return false;
  if (schema.type === 'integer') return /^-?\d+$/.test(value);
  if (schema.type === 'boolean') return value === 'true' || value === 'false';
  return true;
}

/** What is wrong with a request's path parameters and query, by the description. */
export function checkRequest(method: string, url: URL): string[] {
  const found = findOperation(method, url.pathname);
  if (found === null) return [`${method} ${url.pathname}: no such operation in the description`];
  const { operation, pathParams } = found;
  const problems: string[] = [];
  const where = `${method} ${operation.template}`;
  for (const parameter of operation.parameters.filter((p) => p.in === 'path')) {
    const value = pathParams[parameter.name] ?? '';
    if (!valueFits(value, parameter.schema)) {
      problems.push(`${where}: path ${parameter.name}=${value} does not fit its schema`);
    }
  }
  const query = operation.parameters.filter((p) => p.in === 'query');
  for (const [name, value] of url.searchParams) {
    const parameter = query.find((p) => p.name === name);
    if (parameter === undefined) problems.push(`${where}: undocumented query parameter ${name}`);
    else if (!valueFits(value, parameter.schema)) {
      problems.push(`${where}: query ${name}=${value} does not fit its schema`);
    }
  }
  for (const parameter of query.filter((p) => p.required === true)) {
    if (!url.searchParams.has(parameter.name)) problems.push(`${where}: ${parameter.name} missing`);
  }
  return problems;
}

/** ajv against a schema that may `$ref` the description's components. */
function compileRooted(cacheKey: string, schema: unknown): ValidateFunction {
  const known = compiled.get(cacheKey);
  if (known !== undefined) return known;
  const rooted = JSON.parse(
    JSON.stringify(toJsonSchema(schema)).replaceAll(
      '"#/components/',
      `"${SCHEMA_ROOT}#/components/`,
    ),
  ) as Json;
  const validate = load().ajv.compile(rooted);
  compiled.set(cacheKey, validate);
  return validate;
}

/**
 * What is wrong with a request's JSON body, by the documented request schema. The schemas
 * allow unknown properties, which GitHub ignores silently; a misspelt key would then be a
 * write that does nothing, so properties the schema does not name are reported too.
 */
export function checkRequestBody(operation: Operation, body: unknown): string[] {
  const where = `${operation.operationId} request`;
  if (operation.requestSchema === null) {
    return body === undefined ? [] : [`${where}: the operation takes no body`];
  }
  const validate = compileRooted(`${operation.operationId} request`, operation.requestSchema);
  const problems = validate(body)
    ? []
    : (validate.errors ?? [])
        .slice(0, 3)
        .map((error) => `${where}: ${error.instancePath || '/'} ${error.message ?? 'is invalid'}`);
  const properties = operation.requestSchema.properties;
  if (isMap(body) && isMap(properties)) {
    for (const name of Object.keys(body)) {
      if (!(name in properties)) problems.push(`${where}: undocumented property ${name}`);
    }
  }
  return problems;
}

/**
 * The schema validator for an answer: the operation's documented response for that status;
 * for a status the operation does not list (403 and 429 rate limits, 5xx, which GitHub
 * documents globally), its `basic-error`. Null when the status documents no body (304).
 */
function responseValidator(operation: Operation, status: number): ValidateFunction | null {
  const { spec } = load();
  const cacheKey = `${operation.operationId} ${status}`;
  const known = compiled.get(cacheKey);
  if (known !== undefined) return known;
  const documented = operation.responses[String(status)];
  let schema: unknown;
  if (documented === undefined) {
    schema = status >= 400 ? { $ref: '#/components/schemas/basic-error' } : undefined;
  } else {
    const response = deref<Json>(documented, spec);
    const content = isMap(response.content) ? response.content['application/json'] : undefined;
    schema = isMap(content) ? content.schema : undefined;
  }
  if (schema === undefined) return null;
  return compileRooted(cacheKey, schema);
}

/** What is wrong with an answer's body, by the schema the description gives it. */
export function checkResponse(operation: Operation, status: number, body: unknown): string[] {
  const validate = responseValidator(operation, status);
  if (validate === null || validate(body)) return [];
  return (validate.errors ?? [])
    .slice(0, 3)
    .map(
      (error) =>
        `${operation.operationId} ${status}: ${error.instancePath || '/'} ${error.message ?? 'is invalid'}`,
    );
}

/**
 * An example the description documents (`components.examples`), as a fresh copy: answers
 * built from it are GitHub's documented shape, with only the fields a test cares about changed.
 */
export function documentedExample(name: string): Json {
  const { spec } = load();
  const value = spec.components.examples?.[name]?.value;
  if (!isMap(value)) throw new Error(`the description documents no example ${name}`);
  return structuredClone(value);
}
