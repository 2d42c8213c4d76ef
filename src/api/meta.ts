import { z } from 'zod';
import { decimalAmountSchema } from '../workflow/budget.js';

/**
 * The parts of metav1.ObjectMeta the controller reads. In the CRD, metadata is validated by
 * the apiserver itself (it only accepts `type: object` there), so this schema is for the
 * TypeScript types and for parsing objects read from the API; unknown keys pass through.
 */
export const ownerReferenceSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});
export type OwnerReference = z.infer<typeof ownerReferenceSchema>;

export const objectMetaSchema = z
  .object({
    name: z.string().optional(),
    generateName: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.int().optional(),
    creationTimestamp: z.union([z.string(), z.date()]).optional(),
    deletionTimestamp: z.union([z.string(), z.date()]).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    finalizers: z.array(z.string()).optional(),
    ownerReferences: z.array(ownerReferenceSchema).optional(),
  })
  .loose();
export type ObjectMeta = z.infer<typeof objectMetaSchema>;

/** A custom resource of ours as read from the API: its type meta, metadata, spec and status. */
export function customResourceSchema<Spec extends z.ZodType, Status extends z.ZodType>(
  spec: Spec,
  status: Status,
) {
  return z.object({
    apiVersion: z.string().optional(),
    kind: z.string().optional(),
    metadata: objectMetaSchema,
    spec,
    status: status.optional(),
  });
}

/** Labels and annotations only: what users may set on templates (pods, claims). */
export const templateMetaSchema = z
  .object({
    labels: z
      .record(z.string(), z.string())
      .optional()
      .describe('Labels added to the generated object.'),
    annotations: z
      .record(z.string(), z.string())
      .optional()
      .describe('Annotations added to the generated object.'),
  })
  .describe('Labels and annotations for the generated object.');
export type TemplateMeta = z.infer<typeof templateMetaSchema>;

/**
 * An object whose schema is upstream Kubernetes' and deep (resources, affinity, tolerations,
 * a PVC spec): kept as is with `x-kubernetes-preserve-unknown-fields` instead of copying
 * the upstream schema; the apiserver validates it when the controller creates the Pod/PVC.
 */
export function upstreamObject(description: string) {
  return z
    .record(z.string(), z.unknown())
    .meta({ 'x-kubernetes-preserve-unknown-fields': true })
    .describe(description);
}

/** Token counts reported by the agent. */
export const usageSchema = z
  .object({
    inputTokens: z.int().min(0).describe('Input tokens.'),
    outputTokens: z.int().min(0).describe('Output tokens.'),
    totalTokens: z.int().min(0).describe('Total tokens.'),
    cachedInputTokens: z
      .int()
      .min(0)
      .optional()
      .describe('Of the input tokens, those read from the prompt cache.'),
    cost: decimalAmountSchema.optional().describe('Their cost, from the price table.'),
    currency: z.string().max(16).optional().describe('The currency of cost.'),
    model: z.string().max(256).optional().describe('The model the agent reported.'),
  })
  .describe('Token usage reported by the agent.');
export type Usage = z.infer<typeof usageSchema>;
