import type { z } from 'zod';
import {
  CATEGORIES,
  GROUP,
  ISSUERUN_KIND,
  ISSUERUN_PLURAL,
  ISSUERUN_SHORT_NAMES,
  ISSUERUN_SINGULAR,
  VERSION,
  WORKFLOW_KIND,
  WORKFLOW_PLURAL,
  WORKFLOW_SHORT_NAMES,
  WORKFLOW_SINGULAR,
} from './constants.js';
import { issueRunSpecSchema, issueRunStatusSchema } from './issuerun.js';
import { toStructuralSchema, type JSONSchemaProps } from './structural.js';
import { workflowSpecSchema, workflowStatusSchema } from './workflow.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  priority?: number;
}

interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  printerColumns: PrinterColumn[];
}

/** A CustomResourceDefinition as a plain object (apiextensions.k8s.io/v1). */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: JSONSchemaProps };
    }>;
  };
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

const WORKFLOW: KindDefinition = {
  kind: WORKFLOW_KIND,
  plural: WORKFLOW_PLURAL,
  singular: WORKFLOW_SINGULAR,
  shortNames: WORKFLOW_SHORT_NAMES,
  description:
    'A Workflow holds a WORKFLOW.md (tracker, hooks, agent, prompt) and the Pod template its IssueRuns run in. Argo also has a kind named Workflow: use `kubectl get lwf` (or workflows.lorenz.dev) where both are installed.',
  spec: workflowSpecSchema,
  status: workflowStatusSchema,
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
    {
      // Ready stays True on the last good config after a rejected edit: this column is what
      // shows a bad GitOps commit at a glance.
      name: 'ConfigValid',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="ConfigValid")].status',
      description: 'Whether the spec as written loads (False: runs use the last good config).',
    },
    {
      name: 'Suspended',
      type: 'boolean',
      jsonPath: '.spec.suspend',
      description: 'No new runs start while true.',
    },
    {
      name: 'Active',
      type: 'integer',
      jsonPath: '.status.runs.active',
      description: 'Active runs.',
    },
    {
      name: 'Tracker',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="TrackerReachable")].status',
      description: 'Whether the tracker answered the last poll.',
    },
    {
      name: 'Candidates',
      type: 'integer',
      jsonPath: '.status.dispatch.candidates',
      description: 'Issues the last poll returned.',
    },
    AGE,
    {
      name: 'Generation',
      type: 'integer',
      jsonPath: '.metadata.generation',
      description: 'The generation of the spec as written.',
      priority: 1,
    },
    {
      name: 'Config-Generation',
      type: 'integer',
      jsonPath: '.status.configGeneration',
      description:
        'The generation whose config runs start from: lower than Generation after a rejected edit.',
      priority: 1,
    },
    {
      // A ConfigMap edit (workflowFrom) changes no generation: the snapshot's name, which
      // ends in its digest, says which WORKFLOW.md runs.
      name: 'Config',
      type: 'string',
      jsonPath: '.status.lastGoodConfigMap',
      description: 'The snapshot ConfigMap of the WORKFLOW.md runs start from.',
      priority: 1,
    },
    {
      name: 'Tokens-Today',
      type: 'integer',
      jsonPath: '.status.budget.tokens',
      description:
        "Tokens this Workflow's runs used today, in its budget's time zone (docs/budgets.md).",
      priority: 1,
    },
    {
      name: 'Cost-Today',
      type: 'string',
      jsonPath: '.status.budget.cost',
      description: 'Their cost, in the price table currency, when prices are known.',
      priority: 1,
    },
    {
      name: 'Message',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="ConfigValid")].message',
      description: 'Where the config was loaded from, or why the spec as written is rejected.',
      priority: 1,
    },
  ],
};

const ISSUERUN: KindDefinition = {
  kind: ISSUERUN_KIND,
  plural: ISSUERUN_PLURAL,
  singular: ISSUERUN_SINGULAR,
  shortNames: ISSUERUN_SHORT_NAMES,
  description:
    "An IssueRun is one issue's run under a Workflow: the issue snapshot, and the status of the run Pods that execute the hooks and the agent.",
  spec: issueRunSpecSchema,
  status: issueRunStatusSchema,
  printerColumns: [
    { name: 'Issue', type: 'string', jsonPath: '.spec.issue.identifier' },
    { name: 'Workflow', type: 'string', jsonPath: '.spec.workflowRef.name' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Reason', type: 'string', jsonPath: '.status.reason' },
    { name: 'Attempt', type: 'integer', jsonPath: '.status.attempt' },
    { name: 'Turn', type: 'integer', jsonPath: '.status.turn' },
    {
      name: 'Started',
      type: 'date',
      jsonPath: '.status.startTime',
      description: 'When the first Pod of the run started.',
    },
    {
      name: 'Duration',
      type: 'string',
      jsonPath: '.status.duration',
      description: 'How long the run took; empty until it finishes.',
    },
    AGE,
    { name: 'Branch', type: 'string', jsonPath: '.status.git.branch', priority: 1 },
    {
      name: 'PR',
      type: 'string',
      jsonPath: '.status.git.pullRequest.url',
      description: 'The pull request of the run branch (review loop).',
      priority: 1,
    },
    {
      name: 'Completed',
      type: 'date',
      jsonPath: '.status.completionTime',
      description: 'When the run finished.',
      priority: 1,
    },
    {
      name: 'Message',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="Succeeded")].message',
      description: "The Succeeded condition's message: what the run is doing, or how it ended.",
      priority: 1,
    },
  ],
};

function buildCrd(definition: KindDefinition): CustomResourceDefinition {
  const shortNames = [...definition.shortNames];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${definition.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: definition.kind,
        listKind: `${definition.kind}List`,
        plural: definition.plural,
        singular: definition.singular,
        ...(shortNames.length > 0 ? { shortNames } : {}),
        categories: [...CATEGORIES],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: definition.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: definition.description,
              properties: {
                apiVersion: {
                  type: 'string',
                  description: 'The versioned schema of this representation of an object.',
                },
                kind: { type: 'string', description: 'The REST resource this object represents.' },
                metadata: { type: 'object' },
                spec: toStructuralSchema(definition.spec),
                status: toStructuralSchema(definition.status),
              },
              required: ['spec'],
            },
          },
        },
      ],
    },
  };
}

/** Both CRDs, built from the zod schemas (the single source of crds/*.yaml). */
export function buildCrds(): CustomResourceDefinition[] {
  return [buildCrd(WORKFLOW), buildCrd(ISSUERUN)];
}
