import type { V1PersistentVolumeClaimSpec, V1PodTemplateSpec } from '@kubernetes/client-node';
import type { IssueRun, Workflow } from '../../api/index.js';
import { isLorenzError } from '../../workflow/errors.js';
import { normalizeIssue } from '../../workflow/issue.js';
import { ensembleSize } from '../../workspace/ensemble.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, PODS, PVCS, isConflict, resourcePath } from '../runtime/client.js';
import { ANNOTATION_INPUTS_DIGEST } from '../shared/constants.js';
import { inputsConfigMap, renderRunInputs } from './inputs.js';
import { inputsConfigMapName, runPodName } from '../shared/names.js';
import { issueRunOwnerReference, type ObjectIdentity } from '../shared/owner.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { buildRunPod, workspaceClaim } from './pod-builder.js';
import { defaultRunTimeoutSeconds, type RunnableWorkflow } from './workflow-config.js';

export type EnsureResult =
  | {
      ok: true;
      slots: { slot: number; podName: string }[];
      inputsConfigMap: string;
      configDigest: string;
    }
  | { ok: false; reason: 'TemplateError' | 'WorkflowInvalid' | 'InputsInvalid'; message: string };

async function createIgnoringConflict(
  client: KubeClient,
  path: string,
  body: unknown,
): Promise<boolean> {
  try {
    await client.request({ method: 'POST', path, body });
    return true;
  } catch (error) {
    if (isConflict(error)) return false;
    throw error;
  }
}

/**
 * Renders the run's inputs and creates what it runs on: the inputs ConfigMap, a workspace
 * claim per slot (when the Workflow asks for one) and a Pod per slot. Every object has a
 * fixed name, so doing this twice (a retry, a restart, a stale cache) creates nothing twice.
 * Template errors come back as a reason before anything is created.
 */
export async function ensureRunObjects(options: {
  client: KubeClient;
  run: IssueRun;
  workflow: Workflow;
  runnable: RunnableWorkflow;
  operatorImage: string;
  podTemplatePolicy?: PodTemplatePolicy | undefined;
  existingPods: ReadonlySet<string>;
}): Promise<EnsureResult> {
  const { client, run, workflow, runnable } = options;
  const identity: ObjectIdentity = {
    name: run.metadata.name ?? '',
    namespace: run.metadata.namespace ?? '',
    uid: run.metadata.uid ?? '',
  };
  const config = runnable.loaded.config;
  let issue;
  try {
    issue = normalizeIssue(run.spec.issue, 'spec.issue');
  } catch (error) {
    return { ok: false, reason: 'InputsInvalid', message: (error as Error).message };
  }
  const size = ensembleSize(issue, config.agent.ensembleSize);
  const attempt = run.spec.attempt ?? 1;
  let inputs;
  try {
    inputs = renderRunInputs({
      workflowText: runnable.text,
      config,
      promptTemplate: runnable.loaded.promptTemplate,
      issue,
      run: {
        run: identity.name,
        identifier: issue.identifier,
        attempt: run.spec.attempt ?? null,
        ensembleSize: size,
      },
    });
  } catch (error) {
    if (isLorenzError(error)) return { ok: false, reason: 'TemplateError', message: error.message };
    throw error;
  }
  const podTemplate = workflow.spec.podTemplate as V1PodTemplateSpec | undefined;
  const claimSpec = workflow.spec.workspace?.volumeClaimTemplate?.spec as
    V1PersistentVolumeClaimSpec | undefined;
  const slots = Array.from({ length: size }, (_, slot) => ({
    slot,
    podName: runPodName(identity.name, slot, attempt),
  }));
  const missing = slots.filter((entry) => !options.existingPods.has(entry.podName));
  const configMapName = inputsConfigMapName(identity.name);
  let inputsDigest = inputs.digest;
  let pods;
  try {
    pods = missing.map((entry) =>
      buildRunPod({
        run: identity,
        workflowName: workflow.metadata.name ?? '',
        podTemplate,
        volumeClaimSpec: claimSpec,
        slot: entry.slot,
        attempt,
        operatorImage: options.operatorImage,
        inputsConfigMap: configMapName,
        inputsDigest,
        issueState: issue.state,
        hooksTimeoutMs: config.hooks.timeoutMs,
        activeDeadlineSeconds: workflow.spec.runTimeoutSeconds ?? defaultRunTimeoutSeconds(config),
        policy: options.podTemplatePolicy,
        redactSecrets: workflow.spec.redactSecretOutput ?? true,
      }),
    );
  } catch (error) {
    if (isLorenzError(error))
      return { ok: false, reason: 'WorkflowInvalid', message: error.message };
    throw error;
  }
  if (missing.length > 0) {
    const configMap = inputsConfigMap({
      run: identity.name,
      namespace: identity.namespace,
      owner: issueRunOwnerReference(identity),
      inputs,
    });
    const createConfigMap = () =>
      createIgnoringConflict(client, resourcePath(CONFIGMAPS, identity.namespace), configMap);
    const createRest = () =>
      Promise.all([
        ...(claimSpec
          ? missing.map((entry) =>
              createIgnoringConflict(
                client,
                resourcePath(PVCS, identity.namespace),
                workspaceClaim({
                  run: identity,
                  workflowName: workflow.metadata.name ?? '',
                  slot: entry.slot,
                  spec: claimSpec,
                }),
              ),
            )
          : []),
        ...pods.map((pod) =>
          createIgnoringConflict(client, resourcePath(PODS, identity.namespace), pod),
        ),
      ]);
    if (!run.status?.inputsConfigMap && attempt === 1) {
      // A run seen for the first time: nothing was rendered for it before, so the Pods can be
      // created beside their inputs instead of after them (one API round trip less before
      // the Pod exists; a kubelet waits for a ConfigMap volume that is not there yet).
      await Promise.all([createConfigMap(), createRest()]);
    } else {
      if (!(await createConfigMap())) {
        // Rendered earlier (perhaps from an older config): the Pods run what is stored.
        const existing = await client.request<{
          metadata?: { annotations?: Record<string, string> };
        }>({
          path: resourcePath(CONFIGMAPS, identity.namespace, configMapName),
        });
        inputsDigest = existing.metadata?.annotations?.[ANNOTATION_INPUTS_DIGEST] ?? inputsDigest;
        for (const pod of pods) {
          if (pod.metadata?.annotations)
            pod.metadata.annotations[ANNOTATION_INPUTS_DIGEST] = inputsDigest;
        }
      }
      await createRest();
    }
  }
  return { ok: true, slots, inputsConfigMap: configMapName, configDigest: runnable.digest };
}
