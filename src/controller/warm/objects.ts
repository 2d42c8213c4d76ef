import type { V1PersistentVolumeClaimSpec } from '@kubernetes/client-node';
import type { Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import {
  CONFIGMAPS,
  PODS,
  PVCS,
  isAlreadyExists,
  isNotFound,
  resourcePath,
} from '../runtime/client.js';
import { lookUpObject } from '../runtime/lookup.js';
import type { RunnableWorkflow } from '../shared/config-snapshot.js';
import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { VOLUME_SNAPSHOTS, snapshotClassFor } from '../shared/snapshot-support.js';
import {
  identityOf,
  warmSnapshot,
  warmUpClaim,
  warmUpInputs,
  warmUpInputsConfigMap,
  warmUpPod,
  type VolumeSnapshotObject,
} from './children.js';
import type { SnapshotState } from './decide.js';

/** Creates `body` at `collection`; one that exists (made before a restart) is taken as made. */
async function createOnce(client: KubeClient, collection: string, body: object): Promise<void> {
  try {
    await client.request({ method: 'POST', path: collection, body });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

async function deleteIfThere(client: KubeClient, path: string): Promise<void> {
  try {
    await client.request({ method: 'DELETE', path });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

export interface WarmUpObjectsOptions {
  client: KubeClient;
  workflow: Workflow;
  runnable: RunnableWorkflow;
  name: string;
  configDigest: string;
  unlessCommit: string | undefined;
  operatorImage: string;
  policy?: PodTemplatePolicy | undefined;
}

/**
 * The warm-up's inputs ConfigMap and claim (a full warm-up's; a head check has none), then its
 * Pod (which mounts them). Each has the
 * warm-up's fixed name, so making them again after a restart makes nothing twice. The Pod is
 * built first: a template the pod builder refuses (invalid_pod_template) throws before
 * anything is made.
 */
export async function createWarmUpObjects(options: WarmUpObjectsOptions): Promise<void> {
  const { client, workflow, name } = options;
  const identity = identityOf(workflow);
  const inputs = warmUpInputs(options.runnable.text);
  const pod = warmUpPod({
    workflow,
    config: options.runnable.loaded.config,
    name,
    operatorImage: options.operatorImage,
    inputsDigest: inputs.digest,
    configDigest: options.configDigest,
    unlessCommit: options.unlessCommit,
    policy: options.policy,
  });
  const claimSpec = workflow.spec.workspace?.volumeClaimTemplate?.spec as
    V1PersistentVolumeClaimSpec | undefined;
  await Promise.all([
    createOnce(
      client,
      resourcePath(CONFIGMAPS, identity.namespace),
      warmUpInputsConfigMap(identity, name, inputs),
    ),
    claimSpec && options.unlessCommit === undefined
      ? createOnce(
          client,
          resourcePath(PVCS, identity.namespace),
          warmUpClaim(identity, name, claimSpec),
        )
      : Promise.resolve(),
  ]);
  await createOnce(client, resourcePath(PODS, identity.namespace), pod);
}

/**
 * Deletes a warm-up's Pod, inputs and claim once its outcome is recorded (the snapshot is
 * its own object and stays). The Pod goes last: while it is there, the rest is looked for.
 */
export async function deleteWarmUpObjects(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<void> {
  await Promise.all([
    deleteIfThere(client, resourcePath(CONFIGMAPS, namespace, name)),
    deleteIfThere(client, resourcePath(PVCS, namespace, name)),
  ]);
  await deleteIfThere(client, resourcePath(PODS, namespace, name));
}

/** The warm-up's VolumeSnapshot: absent, or present and whether it is ready. */
export async function lookUpWarmSnapshot(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<SnapshotState> {
  const found = await lookUpObject<VolumeSnapshotObject>(client, VOLUME_SNAPSHOTS, namespace, name);
  if (found.kind !== 'found') return { kind: 'absent' };
  const status = found.object.status;
  return {
    kind: 'present',
    readyToUse: status?.readyToUse === true,
    error: status?.error?.message,
  };
}

/** Snapshots the warm-up's claim, with the class snapshot sources are checked against. */
export async function createWarmSnapshot(
  client: KubeClient,
  workflow: Workflow,
  name: string,
): Promise<void> {
  const identity = identityOf(workflow);
  const found = await snapshotClassFor(client, workflow);
  const snapshotClass = found.kind === 'found' ? found.name : undefined;
  await createOnce(
    client,
    resourcePath(VOLUME_SNAPSHOTS, identity.namespace),
    warmSnapshot(identity, name, snapshotClass),
  );
}

export const deleteWarmSnapshot = (client: KubeClient, namespace: string, name: string) =>
  deleteIfThere(client, resourcePath(VOLUME_SNAPSHOTS, namespace, name));
