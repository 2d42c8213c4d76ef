// Renders the WORKFLOW.md configuration reference from the zod schema, so docs/configuration.md's
// table cannot drift from what the parser accepts: keys, types, bounds, defaults and descriptions
// all come from src/workflow/config-schema.ts.
import { z } from 'zod';
import {
  TOP_LEVEL_SECTIONS,
  agentSection,
  agentsSection,
  bridgeSection,
  gitSection,
  hooksSection,
  pollingSection,
  reviewSection,
  trackerSection,
  workerSection,
  workspaceSection,
} from '../../src/workflow/config-schema.js';
import { approvalRuleSection, approvalsSection } from '../../src/workflow/approvals-schema.js';

export const BEGIN_MARKER = '<!-- BEGIN GENERATED: workflow-config (npm run docs) -->';
export const END_MARKER = '<!-- END GENERATED: workflow-config -->';

interface JsonSchemaNode {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonSchemaNode[];
  items?: JsonSchemaNode;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  default?: unknown;
  description?: string;
  properties?: Record<string, JsonSchemaNode>;
}

const SECTIONS: Record<(typeof TOP_LEVEL_SECTIONS)[number], z.ZodObject | null> = {
  tracker: trackerSection,
  polling: pollingSection,
  workspace: workspaceSection,
  hooks: hooksSection,
  agent: agentSection,
  agents: agentsSection,
  worker: workerSection,
  review: reviewSection,
};

function typeOf(node: JsonSchemaNode): string {
  if (node.enum) return node.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (node.anyOf) return node.anyOf.map(typeOf).join(' \\| ');
  const type = Array.isArray(node.type) ? node.type.join(' \\| ') : (node.type ?? 'any');
  if (type === 'array' && node.items) return `list of ${typeOf(node.items)}`;
  const bounds: string[] = [];
  if (node.exclusiveMinimum !== undefined) bounds.push(`> ${node.exclusiveMinimum}`);
  if (node.minimum !== undefined && node.minimum > Number.MIN_SAFE_INTEGER) {
    bounds.push(`≥ ${node.minimum}`);
  }
  if (node.maximum !== undefined && node.maximum < Number.MAX_SAFE_INTEGER) {
    bounds.push(`≤ ${node.maximum}`);
  }
  return bounds.length > 0 ? `${type} (${bounds.join(', ')})` : type;
}

/** The default as the parser applies it: what the field becomes when the key is absent. */
function defaultOf(field: z.ZodType | undefined): string {
  const parsed = field?.safeParse(undefined);
  if (!parsed?.success) return '(required)';
  const value: unknown = parsed.data;
  if (Array.isArray(value) && value.length === 0) return '`[]`';
  if (value !== null && typeof value === 'object' && Object.keys(value).length === 0) return '`{}`';
  // A multi-line template does not fit a table cell; its description says where it is shown.
  if (typeof value === 'string' && value.includes('\n')) return '(a template, see description)';
  return `\`${String(JSON.stringify(value)).replaceAll('|', '\\|')}\``;
}

function rows(prefix: string, schema: z.ZodObject): string[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  return Object.entries(json.properties ?? {}).map(([key, node]) => {
    const name = `${prefix}.${key}`;
    const description = (node.description ?? '').replaceAll('|', '\\|');
    const field = schema.shape[key] as z.ZodType | undefined;
    return `| \`${name}\` | ${typeOf(node)} | ${defaultOf(field)} | ${description} |`;
  });
}

export function renderWorkflowReference(): string {
  const lines = [
    BEGIN_MARKER,
    '| key | type | default | description |',
    '| --- | --- | --- | --- |',
  ];
  for (const section of TOP_LEVEL_SECTIONS) {
    const schema = SECTIONS[section];
    if (schema) lines.push(...rows(section, schema));
    if (section === 'workspace') lines.push(...rows('workspace.git', gitSection));
    if (section === 'agent') {
      lines.push(...rows('agent.approvals', approvalsSection));
      lines.push(...rows('agent.approvals.rules[]', approvalRuleSection));
    }
  }
  lines.push(...rows('agents.<kind>', bridgeSection(undefined)));
  lines.push(
    '',
    'Built-in kinds: `agents.codex.bridge_command` defaults to `codex-acp`, `agents.claude.bridge_command` to `claude-agent-acp`; any other key under `agents` is a custom kind and must set `bridge_command`. Only the hooks keys have aliases (camelCase); unknown keys are reported as warnings, except under `agent.approvals` and `agent.budget`, where they are errors ([approvals.md](approvals.md), [budgets.md](budgets.md)).',
    END_MARKER,
  );
  return lines.join('\n');
}

/** Replace the generated block of a document; throws when the markers are missing. */
export function withWorkflowReference(document: string): string {
  const start = document.indexOf(BEGIN_MARKER);
  const end = document.indexOf(END_MARKER);
  if (start < 0 || end < start) throw new Error('the document has no workflow-config markers');
  return (
    document.slice(0, start) + renderWorkflowReference() + document.slice(end + END_MARKER.length)
  );
}
