import type { ReviewPromptContext } from '../../template/review-context.js';
import type { ReviewConfig } from '../../workflow/review-config.js';
import type {
  V1PersistentVolumeClaimSpec,
  V1Pod,
  V1PodTemplateSpec,
} from '@kubernetes/client-node';
import {
  Reasons,
  type IssueRun,
  type Workflow,
  type WorkspaceSourceStatus,
} from '../../api/index.js';
import { errorMessage, isLorenzError } from '../../workflow/errors.js';
import type { Issue } from '../../workflow/issue.js';
import { runIssue } from '../shared/run-issue.js';
import { ensembleSize } from '../../workspace/ensemble.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, PODS, PVCS, SECRETS, resourcePath } from '../runtime/client.js';
import { ANNOTATION_INPUTS_DIGEST } from '../shared/constants.js';
import { inputsConfigMapName, runPodName, toolsTokenSecretName } from '../shared/object-names.js';
import { attemptQueue } from './kueue.js';
import { issueRunOwnerReference, type ObjectIdentity } from '../shared/owner.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { CreateRefused, createOwned, type CreateFailure, type CreateTarget } from './create.js';
import { inputsConfigMap, renderRunInputs, type RunInputs } from './inputs.js';
import { buildRunPod, workspaceClaim, type RunPodTools } from './pod-builder.js';
import { mintToolsToken, toolsTokenSecret } from './tools-token.js';
import type { SshPlan, SshWorkers } from './ssh-placement.js';
import { attemptBudget, type BudgetFor } from './attempt-budget.js';
import type { RunnableWorkflow } from '../shared/config-snapshot.js';
import type { LoadedWorkflow } from '../../template/load-workflow.js';
import { toolsServerName } from '../../api/run-pod.js';
import type { RunBudget } from '../../workflow/budget.js';
import type { WorkflowConfig } from '../../workflow/config.js';

export type EnsureResult =
  | {
      ok: true;
      slots: { slot: number; attempt: number; podName: string; host?: string | undefined }[];
      inputsConfigMap: string;
      configDigest: string;
    }
  | ({ ok: false } & CreateFailure);

/**
 * A ConfigMap holds at most 1 MiB, keys and metadata included: the rendered inputs must
 * leave room for those.
 */
export const MAX_INPUTS_BYTES = 1_000_000;

const final = (reason: string, message: string): EnsureResult => ({
  ok: false,
  final: true,
  reason,
  message,
});

function inputsBytes(inputs: RunInputs): number {
  return Object.entries(inputs.files).reduce(
    (sum, [name, text]) => sum + Buffer.byteLength(name) + Buffer.byteLength(text),
    0,
  );
}

/** The controller's settings that every start of a run's objects is made with. */
export interface StartSettings {
  client: KubeClient;
  operatorImage: string;
  podTemplatePolicy?: PodTemplatePolicy | undefined;
  toolsUrl?: string | undefined;
  budgetFor?: BudgetFor | undefined;
}

/**
 * What ensureRunObjects is given alike by a first run's start and by a retry's: the run, its
 * Workflow, the SSH workers planned for it, and the controller's settings.
 */
export function startOf(
  settings: StartSettings,
  run: IssueRun,
  workflow: Workflow,
  runnable: RunnableWorkflow,
  ssh: SshPlan,
) {
  return {
    client: settings.client,
    run,
    workflow,
    runnable,
    operatorImage: settings.operatorImage,
    podTemplatePolicy: settings.podTemplatePolicy,
    toolsUrl: settings.toolsUrl,
    ssh: ssh.kind === 'ready' ? ssh : undefined,
    budget: attemptBudget(settings.budgetFor, run, workflow),
  };
}

/**
 * Renders the run's inputs and creates what it runs on: the inputs ConfigMap, a workspace
 * claim per slot (when the Workflow asks for one) and a Pod per slot. Every object has a
 * fixed name and must be owned by the run, so doing this twice (a retry, a restart, a
 * stale cache) creates nothing twice. Template errors and inputs too large to store come
 * back as a reason before anything is created; an apiserver's refusal comes back as a
 * reason too, final when retrying cannot help.
 */
// eslint-disable-next-line max-lines-per-function -- the ordered steps of a start (inputs, token, claims, Pods); each returns early with its own failure
export async function ensureRunObjects(options: {
  client: KubeClient;
  run: IssueRun;
  workflow: Workflow;
  runnable: RunnableWorkflow;
  operatorImage: string;
  podTemplatePolicy?: PodTemplatePolicy | undefined;
  existingPods: ReadonlySet<string>;
  /**
   * An earlier IssueRun of this name was deleted a moment ago, or its Pods are still about
   * (earlier-runs.ts): its inputs may be too, so even on the first pass they go first.
   */
  earlierRunAbout?: boolean;
  /** A retry: the attempt to start and its slots (default: every slot's first attempt). */
  retry?: { attempt: number; slots: readonly number[] } | undefined;
  /** The agent-tools gateway URL run Pods use; absent: the controller serves no tools. */
  toolsUrl?: string | undefined;
  /** workspace.git's branch as the run's status keeps it (git-branch.ts); absent without it. */
  branch?: string | undefined;
  /** The SSH workers of the slots, recorded in the status before this (ssh-placement.ts). */
  ssh?: SshWorkers | undefined;
  /** A review round's prompt template and feedback (review-inputs.ts). */
  review?: { config: ReviewConfig; context: ReviewPromptContext } | undefined;
  /** The attempt's budget for this configuration (shared/run-budget.ts); absent: none. */
  budget?: ((config: WorkflowConfig) => Promise<RunBudget | undefined>) | undefined;
  /** What the workspace starts from (start-preconditions.ts); absent: the status's record. */
  source?: WorkspaceSourceStatus | undefined;
}): Promise<EnsureResult> {
  const { client, run, workflow, runnable } = options;
  const identity: ObjectIdentity = {
    name: run.metadata.name ?? '',
    namespace: run.metadata.namespace ?? '',
    uid: run.metadata.uid ?? '',
  };
  const config = runnable.loaded.config;
  let issue: Issue;
  try {
    issue = runIssue(run);
  } catch (error) {
    return final(Reasons.InputsInvalid, errorMessage(error));
  }
  const size = ensembleSize(issue, config.agent.ensembleSize);
  const attempt = options.retry?.attempt ?? run.spec.attempt ?? 1;
  let inputs: RunInputs;
  try {
    inputs = await renderRunInputs({
      workflowText: runnable.text,
      config,
      promptTemplate: runnable.loaded.promptTemplate,
      review: options.review,
      issue,
      run: {
        run: identity.name,
        identifier: issue.identifier,
        // The templates see null on a first run, the number on a retry (as in Lorenz:
        // docs/design.md#templates).
        attempt: options.retry ? attempt : (run.spec.attempt ?? null),
        ensembleSize: size,
        // Only with a branch: the inputs of a run without workspace.git stay as they were.
        ...(options.branch === undefined ? {} : { branch: options.branch }),
      },
    });
  } catch (error) {
    if (isLorenzError(error)) return final(Reasons.TemplateError, error.message);
    throw error;
  }
  const bytes = inputsBytes(inputs);
  if (bytes > MAX_INPUTS_BYTES) {
    return final(
      Reasons.InputsTooLarge,
      `the rendered inputs (WORKFLOW.md, the issue, ${size} prompt(s)) take ${bytes} bytes; a ConfigMap holds at most ${MAX_INPUTS_BYTES}: shorten the prompt, the issue description or the ensemble`,
    );
  }
  const podTemplate = workflow.spec.podTemplate as V1PodTemplateSpec | undefined;
  const claimSpec = workflow.spec.workspace?.volumeClaimTemplate?.spec as
    V1PersistentVolumeClaimSpec | undefined;
  const source = options.source ?? run.status?.workspaceSource;
  const fromSnapshot = claimSpec && source?.type === 'VolumeSnapshot' ? source : undefined;
  const slots = Array.from({ length: size }, (_, slot) => ({
    slot,
    attempt,
    podName: runPodName(identity.name, slot, attempt),
    ...(options.ssh ? { host: options.ssh.hosts.get(slot) } : {}),
  })).filter((entry) => !options.retry || options.retry.slots.includes(entry.slot));
  const missing = slots.filter((entry) => !options.existingPods.has(entry.podName));
  const configMapName = inputsConfigMapName(identity.name, options.retry ? attempt : 1);
  const tools: RunPodTools | undefined =
    options.toolsUrl !== undefined && workflow.spec.tools?.enabled !== false
      ? {
          url: options.toolsUrl,
          serverName: toolsServerName(config.tracker.kind),
          secretName: toolsTokenSecretName(identity.name, attempt),
        }
      : undefined;
  // Credentials only for a Workflow that clones: any other run has no use for them.
  const gitCredentialsSecret = config.workspace.git
    ? workflow.spec.git?.credentialsSecretRef?.name
    : undefined;
  const budget = missing.length > 0 ? await options.budget?.(config) : undefined;
  const queue = attemptQueue(run, workflow, identity, attempt, slots);
  let pods: V1Pod[];
  try {
    pods = missing.map((entry) =>
      buildRunPod({
        run: identity,
        workflowName: workflow.metadata.name ?? '',
        podTemplate,
        volumeClaimSpec: claimSpec,
        sourceDigest: fromSnapshot?.digest,
        slot: entry.slot,
        attempt,
        operatorImage: options.operatorImage,
        inputsConfigMap: configMapName,
        inputsDigest: inputs.digest,
        issueState: issue.state,
        hooksTimeoutMs: config.hooks.timeoutMs,
        activeDeadlineSeconds: workflow.spec.runTimeoutSeconds ?? defaultRunTimeoutSeconds(config),
        policy: options.podTemplatePolicy,
        redactSecrets: workflow.spec.redactSecretOutput ?? true,
        tools,
        gitCredentialsSecret,
        ssh: sshOf(options.ssh, entry.slot),
        budget,
        queue,
      }),
    );
  } catch (error) {
    if (isLorenzError(error)) return final(Reasons.WorkflowInvalid, error.message);
    throw error;
  }

  const target = (
    kind: CreateTarget['kind'],
    collection: string,
    body: { metadata?: { name?: string } },
  ): CreateTarget => ({
    kind,
    name: body.metadata?.name ?? '',
    namespace: identity.namespace,
    collection,
    body,
    ownerUid: identity.uid,
  });
  const inputsTarget = target(
    'ConfigMap',
    resourcePath(CONFIGMAPS, identity.namespace),
    inputsConfigMap({
      run: identity.name,
      ...(options.retry ? { attempt } : {}),
      namespace: identity.namespace,
      owner: issueRunOwnerReference(identity),
      inputs,
    }),
  );
  // A token only when a Pod is still to be made: one that exists mounts the Secret already
  // (made before it), and a Secret that exists keeps its token (a new one would not match).
  const tokenTarget =
    tools && missing.length > 0
      ? target(
          'Secret',
          resourcePath(SECRETS, identity.namespace),
          toolsTokenSecret({
            run: identity,
            attempt,
            token: mintToolsToken(identity.namespace, identity.name, attempt),
          }),
        )
      : undefined;
  const tokenFirst = tokenTarget ? [tokenTarget] : [];
  const restTargets = [
    ...(claimSpec
      ? missing.map((entry) =>
          target(
            'PersistentVolumeClaim',
            resourcePath(PVCS, identity.namespace),
            workspaceClaim({
              run: identity,
              workflowName: workflow.metadata.name ?? '',
              slot: entry.slot,
              spec: claimSpec,
              fromSnapshot: fromSnapshot?.volumeSnapshot,
            }),
          ),
        )
      : []),
    ...pods.map((pod) => target('Pod', resourcePath(PODS, identity.namespace), pod)),
  ];

  try {
    if (run.status === undefined && !options.retry && !options.earlierRunAbout) {
      // A run seen for the first time: nothing was rendered for it before, so the Pods can be
      // created beside their inputs instead of after them (one API round trip less before
      // the Pod exists; a kubelet waits for a ConfigMap volume that is not there yet).
      // The token Secret alone goes before them: a Pod must never mount a name that is not
      // ours yet (a squatter's Secret would be refused by the create, after the kubelet read it).
      await settleAll([
        createOwned(client, inputsTarget),
        createAllOwned(client, tokenFirst).then(() =>
          settleAll(restTargets.map((each) => createOwned(client, each))),
        ),
      ]);
    } else if (!run.status?.inputsConfigMap || missing.length > 0 || options.retry) {
      // Inputs (and the token) first; when the inputs were rendered before (perhaps from an
      // older config), the Pods run what is stored.
      const storing = createOwned(client, inputsTarget);
      await settleAll([storing, createAllOwned(client, tokenFirst)]);
      const stored = await storing;
      const digest = stored.object.metadata?.annotations?.[ANNOTATION_INPUTS_DIGEST];
      if (stored.outcome === 'existing' && digest) {
        for (const pod of pods) {
          if (pod.metadata?.annotations)
            pod.metadata.annotations[ANNOTATION_INPUTS_DIGEST] = digest;
        }
      }
      await settleAll(restTargets.map((each) => createOwned(client, each)));
    }
  } catch (error) {
    if (!(error instanceof CreateRefused)) throw error;
    // The run ends here: a Pod created beside inputs that were refused would wait forever.
    if (error.failure.final) await deletePods(client, identity.namespace, pods);
    return { ok: false, ...error.failure };
  }
  return { ok: true, slots, inputsConfigMap: configMapName, configDigest: runnable.digest };
}

/** A slot's SSH worker for its Pod; a slot with no host recorded is a bug, said so. */
function sshOf(ssh: SshWorkers | undefined, slot: number) {
  if (!ssh) return undefined;
  const host = ssh.hosts.get(slot);
  if (host === undefined) throw new Error(`slot ${slot} has no SSH worker placed`);
  return { secretName: ssh.secretName, host };
}

const createAllOwned = (client: KubeClient, targets: readonly CreateTarget[]) =>
  settleAll(targets.map((each) => createOwned(client, each)));

async function deletePods(client: KubeClient, namespace: string, pods: readonly V1Pod[]) {
  await Promise.allSettled(
    pods.map((pod) =>
      client.request({ method: 'DELETE', path: resourcePath(PODS, namespace, pod.metadata?.name) }),
    ),
  );
}

/**
 * Waits for every create, then throws the weightiest failure: a final refusal before a
 * retryable one before a transient error. No create is left running behind a throw.
 */
async function settleAll(creates: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(creates);
  const failures = results.flatMap((result) =>
    result.status === 'rejected' ? [result.reason as unknown] : [],
  );
  const refused = failures.filter(
    (error): error is CreateRefused => error instanceof CreateRefused,
  );
  const first = refused.find((error) => error.failure.final) ?? refused[0] ?? failures[0];
  if (first === undefined) return;
  throw first instanceof Error ? first : new Error(errorMessage(first));
}

/** activeDeadlineSeconds when the Workflow sets no runTimeoutSeconds: every hook and turn at its limit. */
function defaultRunTimeoutSeconds(config: LoadedWorkflow['config']): number {
  const hooks = 4 * Math.ceil(config.hooks.timeoutMs / 1000);
  const turns = config.agent.maxTurns * Math.ceil(config.agents.turnTimeoutMs / 1000);
  return hooks + turns + 300;
}
