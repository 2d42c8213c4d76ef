// docs/resources.md's field tables, generated from the CRD schemas themselves (src/api): the
// Workflow's and IssueRun's spec and status fields with their types and descriptions, and
// the condition reasons, so the page cannot drift from what the apiserver accepts.
import { z } from 'zod';
import {
  Reasons,
  issueRunSpecSchema,
  issueRunStatusSchema,
  workflowSpecSchema,
  workflowStatusSchema,
} from '../../src/api/index.js';

export const BEGIN_MARKER = '<!-- BEGIN GENERATED: resource-fields (npm run docs) -->';
export const END_MARKER = '<!-- END GENERATED: resource-fields -->';

interface Node {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: Node[];
  items?: Node;
  description?: string;
  properties?: Record<string, Node>;
}

/** Objects whose insides are Kubernetes' own (a Pod template, a claim): named, not unfolded. */
const OPAQUE = new Set(['spec.podTemplate', 'spec.workspace.volumeClaimTemplate', 'spec.issue']);

function typeOf(node: Node): string {
  if (node.enum) return node.enum.map((value) => `\`${String(value)}\``).join(' \\| ');
  if (node.anyOf) return node.anyOf.map(typeOf).join(' \\| ');
  const type = Array.isArray(node.type) ? node.type.join(' \\| ') : (node.type ?? 'object');
  return type === 'array' && node.items ? `list of ${typeOf(node.items)}` : type;
}

function rows(path: string, node: Node, depth: number): string[] {
  return Object.entries(node.properties ?? {}).flatMap(([key, child]) => {
    const name = `${path}.${key}`;
    const item = child.items?.properties ? child.items : child;
    const description = (child.description ?? '').replaceAll('|', '\\|').replaceAll('\n', ' ');
    const own = `| \`${name}\` | ${typeOf(child)} | ${description} |`;
    const unfold = depth < 2 && item.properties !== undefined && !OPAQUE.has(name);
    return [own, ...(unfold ? rows(child.items ? `${name}[]` : name, item, depth + 1) : [])];
  });
}

function table(path: string, schema: z.ZodType): string[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Node;
  return ['| field | type | description |', '| --- | --- | --- |', ...rows(path, json, 0)];
}

export function renderResourceFields(): string {
  return [
    BEGIN_MARKER,
    '### Workflow `spec`',
    '',
    ...table('spec', workflowSpecSchema),
    '',
    '### Workflow `status`',
    '',
    ...table('status', workflowStatusSchema),
    '',
    '### IssueRun `spec`',
    '',
    ...table('spec', issueRunSpecSchema),
    '',
    '### IssueRun `status`',
    '',
    ...table('status', issueRunStatusSchema),
    '',
    '### Condition reasons',
    '',
    Object.values(Reasons)
      .map((reason) => `\`${reason}\``)
      .join(', '),
    END_MARKER,
  ].join('\n');
}

/** Replace the generated block of a document; throws when the markers are missing. */
export function withResourceFields(document: string): string {
  const start = document.indexOf(BEGIN_MARKER);
  const end = document.indexOf(END_MARKER);
  if (start < 0 || end < start) throw new Error('the document has no resource-fields markers');
  return (
    document.slice(0, start) + renderResourceFields() + document.slice(end + END_MARKER.length)
  );
}
