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
  shortNames: [],
  description:
    'A Workflow holds a WORKFLOW.md (tracker, hooks, agent, prompt) and the Pod template its IssueRuns run in. Argo also has a kind named Workflow: use `kubectl get workflows.lorenz.dev` where both are installed.',
  spec: workflowSpecSchema,
  status: workflowStatusSchema,
  printerColumns: [
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
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
    { name: 'Branch', type: 'string', jsonPath: '.status.git.branch', priority: 1 },
    AGE,
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
