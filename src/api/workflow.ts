import { z } from 'zod';
import { conditionListSchema } from './conditions.js';
import { kueueQueueNameSchema } from './queue.js';
import { workspaceSourceSchema } from './workspace-source.js';
import { warmStatusSchema, warmWorkspaceSchema } from './warm-workspace.js';
import { secretKeyRefSchema, workflowReviewSchema } from './review.js';
import { workflowBudgetSchema, workflowBudgetStatusSchema } from './budget.js';
import { customResourceSchema, templateMetaSchema, upstreamObject } from './meta.js';
import {
  automountTokenSchema,
  containerNameSchema,
  containerSecurityContextSchema,
  hostNamespaceSchema,
  podSecurityContextSchema,
  volumeMountSchema,
  volumeSchema,
} from './pod-security.js';

const nameSchema = z.string().min(1).max(253);

export const envVarSchema = z
  .object({
    name: z.string().min(1).describe('Name of the environment variable.'),
    value: z.string().optional().describe('Literal value.'),
    valueFrom: upstreamObject(
      'Source for the value (secretKeyRef, configMapKeyRef, fieldRef, resourceFieldRef): the core/v1 EnvVarSource, kept as is (x-kubernetes-preserve-unknown-fields) and validated by the apiserver when the Pod is created.',
    ).optional(),
  })
  .describe('An environment variable of the agent container (core/v1 EnvVar).');

const optionalRefSchema = (what: string) =>
  z
    .object({
      name: nameSchema.describe(`Name of the ${what}.`),
      optional: z.boolean().optional().describe(`Whether the ${what} may be missing.`),
    })
    .describe(`All keys of a ${what} as environment variables.`);

export const envFromSourceSchema = z
  .object({
    prefix: z.string().optional().describe('A prefix added to every variable name.'),
    configMapRef: optionalRefSchema('ConfigMap').optional(),
    secretRef: optionalRefSchema('Secret').optional(),
  })
  .describe('A source of environment variables (core/v1 EnvFromSource).');

export const containerSchema = z
  .object({
    name: containerNameSchema.describe(
      'Container name. The container named `agent` gives the image, env, envFrom and resources of the run container; the controller adds the runner, volumes and security defaults.',
    ),
    image: z
      .string()
      .optional()
      .describe('Image of the agent container: needs node (>= 20), bash and git.'),
    imagePullPolicy: z
      .enum(['Always', 'IfNotPresent', 'Never'])
      .optional()
      .describe('Image pull policy.'),
    env: z
      .array(envVarSchema)
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
      .optional()
      .describe('Environment variables; the only way secrets reach the agent.'),
    envFrom: z
      .array(envFromSourceSchema)
      .optional()
      .describe('Environment variables from ConfigMaps and Secrets.'),
    resources: upstreamObject(
      'Compute resources (core/v1 ResourceRequirements: requests, limits, claims), kept as is (x-kubernetes-preserve-unknown-fields) and validated by the apiserver when the Pod is created.',
    ).optional(),
    securityContext: containerSecurityContextSchema.optional(),
    volumeMounts: z
      .array(volumeMountSchema)
      .max(64)
      .optional()
      .describe('Mounts of volumes of the template (the controller adds its own after them).'),
  })
  .describe('A container of the run Pod template.');

export const podTemplateSchema = z
  .object({
    metadata: templateMetaSchema.optional(),
    spec: z
      .object({
        containers: z
          .array(containerSchema)
          .max(16)
          .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
          .optional()
          .describe('Containers; the one named `agent` configures the run container.'),
        serviceAccountName: z
          .string()
          .optional()
          .describe('Service account of the run Pod (its token is not mounted).'),
        nodeSelector: z
          .record(z.string(), z.string())
          .optional()
          .describe('Node labels the run Pod must match.'),
        tolerations: z
          .array(
            upstreamObject(
              'A core/v1 Toleration, kept as is (x-kubernetes-preserve-unknown-fields) and validated by the apiserver when the Pod is created.',
            ),
          )
          .optional()
          .describe('Tolerations of the run Pod.'),
        affinity: upstreamObject(
          'Scheduling constraints (core/v1 Affinity), kept as is (x-kubernetes-preserve-unknown-fields) and validated by the apiserver when the Pod is created.',
        ).optional(),
        runtimeClassName: z
          .string()
          .optional()
          .describe('RuntimeClass of the run Pod (e.g. gvisor, kata).'),
        priorityClassName: z.string().optional().describe('PriorityClass of the run Pod.'),
        imagePullSecrets: z
          .array(z.object({ name: nameSchema.describe('Name of the Secret.') }))
          .optional()
          .describe('Secrets used to pull the agent image.'),
        securityContext: podSecurityContextSchema.optional(),
        volumes: z
          .array(volumeSchema)
          .max(64)
          .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] })
          .optional()
          .describe('Volumes for the agent container to mount (the controller adds its own).'),
        hostNetwork: hostNamespaceSchema('hostNetwork').optional(),
        hostPID: hostNamespaceSchema('hostPID').optional(),
        hostIPC: hostNamespaceSchema('hostIPC').optional(),
        automountServiceAccountToken: automountTokenSchema.optional(),
        terminationGracePeriodSeconds: z
          .int()
          .min(0)
          .optional()
          .describe(
            'Grace period of a run Pod on deletion; the controller raises it to what after_run and before_remove need.',
          ),
      })
      .optional()
      .describe('The parts of a Pod spec that a Workflow may set.'),
  })
  .describe(
    'A PodTemplateSpec for run Pods. The controller adds the runner, the volumes and restricted security defaults, and refuses what would break them.',
  );

export const workflowToolsSchema = z
  .object({
    enabled: z
      .boolean()
      .optional()
      .describe(
        'Give the agent the tracker tools (an MCP server the controller serves, reached with a token per attempt); default true when the controller serves them.',
      ),
    allowedStates: z
      .array(z.string().min(1).max(253))
      .max(64)
      .optional()
      .describe(
        'The states tracker_update_state may move the issue to (compared trimmed, case-insensitively); default the active and terminal states plus In Review.',
      ),
    createIssue: z
      .boolean()
      .optional()
      .describe('Offer tracker_create_issue (the agent files new issues); default false.'),
    linearGraphql: z
      .boolean()
      .optional()
      .describe('Linear only: offer linear_graphql, raw GraphQL with the key; default false.'),
  })
  .describe(
    "The agent's tools for its own issue: read it and its comments, comment, move it; the tracker key stays with the controller.",
  );

export const workflowWebhooksSchema = z
  .object({
    secretRef: z
      .object({
        name: nameSchema.describe('A Secret in this namespace.'),
        key: z
          .string()
          .min(1)
          .max(253)
          .optional()
          .describe('The key holding the webhook secret; default `webhook_secret`.'),
      })
      .optional()
      .describe(
        'The shared secret deliveries are signed (GitHub, Linear) or sent (GitLab, Jira) with; read by the controller only. Without it, deliveries for this Workflow are refused (404).',
      ),
  })
  .describe(
    'Webhook deliveries from the code host and the tracker (docs/webhooks.md): a delivery only makes the Workflow look again at once; polling stays the fallback.',
  );

/** Longest inline WORKFLOW.md: every run's inputs carry a copy, and a ConfigMap holds 1 MiB. */
export const MAX_WORKFLOW_TEXT = 262_144;

export const workflowSpecSchema = z
  .object({
    workflow: z
      .string()
      .max(MAX_WORKFLOW_TEXT)
      .optional()
      .describe(
        `The WORKFLOW.md text (YAML front matter and Liquid prompt body), at most ${MAX_WORKFLOW_TEXT} characters: it is copied into every run's inputs, which a ConfigMap must hold. Exactly one of workflow and workflowFrom.`,
      ),
    workflowFrom: z
      .object({
        configMapKeyRef: z
          .object({
            name: nameSchema.describe('Name of the ConfigMap, in the Workflow namespace.'),
            key: z.string().min(1).describe('Key holding WORKFLOW.md.'),
          })
          .describe('A key of a ConfigMap in the Workflow namespace.'),
      })
      .optional()
      .describe(
        'Where to read WORKFLOW.md from (a change is a reload). Exactly one of workflow and workflowFrom.',
      ),
    podTemplate: podTemplateSchema.optional(),
    workspace: z
      .object({
        volumeClaimTemplate: z
          .object({
            metadata: templateMetaSchema.optional(),
            spec: upstreamObject(
              'A core/v1 PersistentVolumeClaimSpec, kept as is (x-kubernetes-preserve-unknown-fields) and validated by the apiserver when the claim is created.',
            ),
          })
          .optional()
          .describe(
            'A claim per IssueRun for the workspace, so that retries reuse the tree; an emptyDir when absent.',
          ),
        source: workspaceSourceSchema.optional(),
        warm: warmWorkspaceSchema.optional(),
      })
      .meta({
        'x-kubernetes-validations': [
          {
            rule: '!has(self.source) || !has(self.source.volumeSnapshot) || has(self.volumeClaimTemplate)',
            message:
              'a volumeSnapshot source needs volumeClaimTemplate: only a claim can be restored from a snapshot',
          },
          {
            rule: '!has(self.warm) || has(self.volumeClaimTemplate)',
            message:
              'warm needs volumeClaimTemplate: a warm workspace is a snapshot of a claim, and only a claim can be restored from one',
          },
          {
            rule: '!has(self.warm) || !has(self.source)',
            message:
              'warm and source are mutually exclusive: a warm workspace is the source of the runs',
          },
        ],
      })
      .optional()
      .describe('The workspace volume of run Pods.'),
    ttlSecondsAfterFinished: z
      .int()
      .min(0)
      .optional()
      .describe(
        'Delete a finished IssueRun (and its Pods) this many seconds after it finished; kept when unset.',
      ),
    suspend: z.boolean().optional().describe('Stop starting new runs; running ones go on.'),
    queueName: kueueQueueNameSchema
      .optional()
      .describe(
        "A Kueue LocalQueue in this namespace: its run Pods wait for Kueue's admission (Kueue's plain-Pod integration; an ensemble is one Pod group, admitted whole). Unset: Kueue is not asked.",
      ),
    trackerBoardRef: z
      .object({
        name: z.string().min(1).max(253).describe('A ConfigMap in this namespace.'),
      })
      .optional()
      .describe(
        'For `tracker.kind: local`: the board is the files of this ConfigMap (`BOARD-1.md`: …), so a GitOps repo can hold it; read-only.',
      ),
    trackerSecretRef: secretKeyRefSchema('The key holding the tracker API key; default `api_key`.')
      .optional()
      .describe(
        "The tracker's API key, read by the controller only (never put in a run Pod, an Event, a log or a status).",
      ),
    git: z
      .object({
        credentialsSecretRef: z
          .object({
            name: nameSchema.describe('A Secret in this namespace.'),
          })
          .optional()
          .describe(
            'The git credentials of `workspace.git`: a Secret whose keys are host names (`github.com`) and values a token or `username:token`. It is mounted read-only into the agent container of run Pods as files, never as environment variables, and its tokens are redacted from everything a run reports.',
          ),
      })
      .optional()
      .describe(
        'Git workspaces (`workspace.git` in WORKFLOW.md): what run Pods clone and push with.',
      ),
    worker: z
      .object({
        sshKeySecretRef: z
          .object({
            name: nameSchema.describe('A Secret in this namespace.'),
          })
          .optional()
          .describe(
            'The SSH credentials of `worker.ssh_hosts`: a Secret with the keys `ssh-privatekey` (as in a `kubernetes.io/ssh-auth` Secret) and `known_hosts`. It is mounted read-only into the agent container of run Pods as files, never as environment variables; the runner reads it, and the key is redacted from everything a run reports. Host keys not in `known_hosts` are refused.',
          ),
      })
      .optional()
      .describe(
        'SSH workers (`worker.ssh_hosts` in WORKFLOW.md): what run Pods connect to the hosts with.',
      ),
    redactSecretOutput: z
      .boolean()
      .optional()
      .describe(
        "Replace the values of the agent container's Secret-sourced variables (env valueFrom.secretKeyRef, envFrom secretRef) with [redacted] in hook output, Events, status and logs; default true.",
      ),
    runTimeoutSeconds: z
      .int()
      .min(1)
      .optional()
      .describe(
        'The backstop deadline of a run Pod (activeDeadlineSeconds); computed from the workflow config when unset.',
      ),
    tools: workflowToolsSchema.optional(),
    review: workflowReviewSchema.optional(),
    webhooks: workflowWebhooksSchema.optional(),
    budget: workflowBudgetSchema.optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'has(self.workflow) != has(self.workflowFrom)',
        message: 'exactly one of spec.workflow and spec.workflowFrom must be set',
      },
    ],
  })
  .describe('The desired state of a Workflow.');

export const workflowRunCountsSchema = z
  .object({
    active: z.int().min(0).describe('IssueRuns not finished.'),
    succeeded: z.int().min(0).describe('IssueRuns finished with Succeeded=True.'),
    failed: z.int().min(0).describe('IssueRuns finished with Succeeded=False.'),
  })
  .describe("Counts of this Workflow's IssueRuns.");

const pollTime = (description: string) =>
  z.string().meta({ format: 'date-time' }).optional().describe(description);

export const workflowDispatchSchema = z
  .object({
    trackerKind: z.string().optional().describe('The tracker polled.'),
    lastPollTime: pollTime('When the tracker was last polled.'),
    nextPollTime: pollTime('When it is polled next.'),
    candidates: z.int().min(0).optional().describe('Issues the last poll returned.'),
    dispatched: z.int().min(0).optional().describe('IssueRuns the last poll created.'),
    running: z.int().min(0).optional().describe('Issues held by unfinished IssueRuns.'),
    blocked: z
      .array(
        z.object({
          identifier: z.string().describe('The blocked issue.'),
          by: z.array(z.string()).describe('Its open blockers.'),
        }),
      )
      .max(50)
      .optional()
      .describe('Issues not dispatched because a blocker is open (the first 50).'),
    overCap: z.int().min(0).optional().describe('Issues waiting for a free slot.'),
    budgetSpent: z
      .boolean()
      .optional()
      .describe(
        "The day's budget is spent: nothing was dispatched (status.budget says until when).",
      ),
    lastError: z.string().optional().describe('What the last poll failed with, if it failed.'),
  })
  .describe('What the last poll of the tracker saw and did.');

export const workflowStatusSchema = z
  .object({
    observedGeneration: z.int().min(0).optional().describe('The generation last reconciled.'),
    conditions: conditionListSchema.optional(),
    configDigest: z.string().optional().describe('sha256 of the last good WORKFLOW.md.'),
    configGeneration: z
      .int()
      .min(0)
      .optional()
      .describe(
        'The metadata.generation whose spec the config in force (lastGoodConfigMap) was loaded from: the current generation while ConfigValid is True, an earlier one after a rejected edit.',
      ),
    lastGoodConfigMap: z
      .string()
      .optional()
      .describe('Name of the immutable ConfigMap snapshot holding the last good WORKFLOW.md.'),
    message: z.string().optional().describe('A human-readable summary of the state.'),
    runs: workflowRunCountsSchema.optional(),
    dispatch: workflowDispatchSchema.optional(),
    budget: workflowBudgetStatusSchema.optional(),
    warm: warmStatusSchema.optional(),
  })
  .describe('The observed state of a Workflow.');

export const workflowSchema = customResourceSchema(workflowSpecSchema, workflowStatusSchema);

export type WorkflowSpec = z.infer<typeof workflowSpecSchema>;
export type WorkflowStatus = z.infer<typeof workflowStatusSchema>;
export type WorkflowRunCounts = z.infer<typeof workflowRunCountsSchema>;
export type WorkflowDispatch = z.infer<typeof workflowDispatchSchema>;
export type WorkflowTools = z.infer<typeof workflowToolsSchema>;
export type WorkflowWebhooks = z.infer<typeof workflowWebhooksSchema>;
export type PodTemplate = z.infer<typeof podTemplateSchema>;
export type ContainerTemplate = z.infer<typeof containerSchema>;
export type Workflow = z.infer<typeof workflowSchema>;
