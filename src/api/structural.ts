import { z } from 'zod';

/** A node of an OpenAPI v3 schema as apiextensions.k8s.io/v1 takes it. */
export interface JSONSchemaProps {
  type?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  [key: string]: unknown;
}

const SAFE_INTEGER_BOUND = Number.MAX_SAFE_INTEGER;

/**
 * Turn a zod schema into a *structural* OpenAPI v3 schema, which the apiserver requires of
 * a CRD: everything inline (no $ref), a `type` on every node, nullable as `nullable: true`,
 * no unions (cross-field rules belong in CEL `x-kubernetes-validations`), and
 * `additionalProperties` only where no `properties` are given. Anything that cannot be
 * expressed so throws with the path, so a schema change never silently yields a CRD the
 * apiserver rejects or prunes differently than the types say.
 */
export function toStructuralSchema(schema: z.ZodType): JSONSchemaProps {
  const json = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'throw',
    cycles: 'throw',
    reused: 'inline',
  }) as Record<string, unknown>;
  return structural(json, '');
}

function structural(input: Record<string, unknown>, path: string): JSONSchemaProps {
  const node: Record<string, unknown> = { ...input };
  delete node.$schema;
  delete node.id;
  delete node.title;
  for (const forbidden of ['$ref', '$defs', 'definitions', 'allOf', 'not', 'if', 'then', 'else']) {
    if (forbidden in node) throw new Error(`${path || '<root>'}: '${forbidden}' is not structural`);
  }
  const merged = mergeNullableUnion(node, path);

  if (merged.type === undefined && merged['x-kubernetes-int-or-string'] !== true) {
    throw new Error(`${path || '<root>'}: every node needs a type`);
  }
  if (merged.type === 'integer' || merged.type === 'number') dropSafeIntegerBounds(merged);

  if (merged.type === 'object') {
    const props = merged.properties as Record<string, Record<string, unknown>> | undefined;
    const extra = merged.additionalProperties;
    const preserve = merged['x-kubernetes-preserve-unknown-fields'] === true;
    if (props && Object.keys(props).length > 0) {
      merged.properties = Object.fromEntries(
        Object.entries(props).map(([key, value]) => [key, structural(value, `${path}.${key}`)]),
      );
      // zod emits additionalProperties: false for strict objects; the apiserver prunes
      // unknown fields anyway and rejects additionalProperties beside properties.
      delete merged.additionalProperties;
    } else {
      delete merged.properties;
      if (isObject(extra) && Object.keys(extra).length > 0 && !preserve) {
        merged.additionalProperties = structural(extra, `${path}[*]`);
      } else {
        delete merged.additionalProperties;
      }
    }
    if (Array.isArray(merged.required) && merged.required.length === 0) delete merged.required;
  }

  if (merged.type === 'array') {
    if (!isObject(merged.items)) throw new Error(`${path || '<root>'}: an array needs items`);
    merged.items = structural(merged.items, `${path}[]`);
  }
  return withLeadingKeys(merged);
}

const LEADING_KEYS = ['type', 'format', 'nullable', 'description'];

/** type, format, nullable and description first: the generated YAML reads top-down. */
function withLeadingKeys(node: Record<string, unknown>): Record<string, unknown> {
  const ordered: Record<string, unknown> = {};
  for (const key of LEADING_KEYS) if (key in node) ordered[key] = node[key];
  for (const [key, value] of Object.entries(node)) if (!(key in ordered)) ordered[key] = value;
  return ordered;
}

/** `anyOf: [X, {type: null}]` (a nullable X) becomes X with `nullable: true`. */
function mergeNullableUnion(node: Record<string, unknown>, path: string): Record<string, unknown> {
  const branches = (node.anyOf ?? node.oneOf) as Record<string, unknown>[] | undefined;
  if (!branches) return node;
  const rest = { ...node };
  delete rest.anyOf;
  delete rest.oneOf;
  const nonNull = branches.filter((branch) => !isNullBranch(branch));
  const single = nonNull[0];
  if (nonNull.length !== 1 || !single) {
    throw new Error(`${path || '<root>'}: unions are not structural; use a CEL rule instead`);
  }
  return {
    ...single,
    ...rest,
    ...(nonNull.length < branches.length || single.nullable === true ? { nullable: true } : {}),
  };
}

function isNullBranch(branch: Record<string, unknown>): boolean {
  return (
    branch.type === 'null' ||
    (Array.isArray(branch.enum) && branch.enum.length === 1 && branch.enum[0] === null)
  );
}

/** zod bounds z.int() to the safe-integer range; that says nothing to a reader: drop it. */
function dropSafeIntegerBounds(node: Record<string, unknown>): void {
  if (node.maximum === SAFE_INTEGER_BOUND) delete node.maximum;
  if (node.minimum === -SAFE_INTEGER_BOUND) delete node.minimum;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
