import type { V1ObjectMeta } from '@kubernetes/client-node';
import { Reasons } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { ACCEPT_METADATA_ONLY, KubeApiError, isConflict } from '../runtime/client.js';
import { failpoint } from '../runtime/failpoints.js';

/** Why the run's objects could not all be created, and whether trying again can help. */
export interface CreateFailure {
  /** True: the run ends with this reason. False: a stalled condition, retried with backoff. */
  final: boolean;
  reason: string;
  message: string;
  /**
   * A refusal that clears by itself soon (the garbage collector taking an earlier run's
   * object): retries never wait longer than this, so the run starts soon after it clears.
   */
  maxRetryMs?: number;
}

/** What the garbage collector removes within seconds is looked for again at least this often. */
export const COLLECTED_SOON_RETRY_MS = 5000;

/** Thrown by createOwned for the ensure step to turn into a status. */
export class CreateRefused extends Error {
  constructor(readonly failure: CreateFailure) {
    super(failure.message);
    this.name = 'CreateRefused';
  }
}

export interface Created {
  /** created: by this call; existing: the run's own, made before. */
  outcome: 'created' | 'existing';
  object: { metadata?: V1ObjectMeta };
}

/** What is being created, for messages and reasons. */
export interface CreateTarget {
  kind: 'Pod' | 'ConfigMap' | 'PersistentVolumeClaim' | 'Secret';
  name: string;
  namespace: string;
  /** Path of the collection to POST to. */
  collection: string;
  body: object;
  /** The run's uid: an existing object must be owned by it. */
  ownerUid: string;
}

const INVALID_REASONS = {
  Pod: Reasons.PodInvalid,
  ConfigMap: Reasons.InputsInvalid,
  PersistentVolumeClaim: Reasons.PodInvalid,
  // The tools token is one of the attempt's inputs.
  Secret: Reasons.InputsInvalid,
} as const;
const RETRY_REASONS = {
  Pod: Reasons.PodCreateFailed,
  ConfigMap: Reasons.InputsCreateFailed,
  PersistentVolumeClaim: Reasons.PodCreateFailed,
  Secret: Reasons.InputsCreateFailed,
} as const;

/** The apiserver's refusal as a status: invalid is final, anything else 4xx is retried. */
function refusal(error: KubeApiError, target: CreateTarget): CreateFailure | undefined {
  const what = `${target.kind} ${target.name}`;
  const said = `${error.statusCode} ${error.reason ?? ''}: ${apiMessage(error)}`.replace(' :', ':');
  if (error.statusCode === 400 || error.statusCode === 422) {
    const message = `the apiserver refused ${what} as invalid (${said})`;
    return { final: true, reason: INVALID_REASONS[target.kind], message };
  }
  if (error.statusCode >= 400 && error.statusCode < 500 && error.statusCode !== 429) {
    const message = `the apiserver refused ${what} (${said}); retrying with backoff`;
    return { final: false, reason: RETRY_REASONS[target.kind], message };
  }
  return undefined;
}

function apiMessage(error: KubeApiError): string {
  const body = error.body as { message?: unknown } | undefined;
  return typeof body?.message === 'string' ? body.message : error.message;
}

const controllerOf = (object: { metadata?: V1ObjectMeta }) =>
  (object.metadata?.ownerReferences ?? []).find((owner) => owner.controller === true);

/** Why an object under the run's name is not the run's own, and what the run waits for. */
function nameConflict(target: CreateTarget, existing: { metadata?: V1ObjectMeta }): CreateFailure {
  const what = `${target.kind} ${target.name}`;
  const holder = controllerOf(existing);
  const mine = controllerOf(target.body);
  // An IssueRun of the same name made it: the run was deleted and made again (kubectl
  // delete and apply) before the garbage collector took what the earlier one owned. It goes
  // by itself, within seconds.
  if (holder && mine && holder.kind === mine.kind && holder.name === mine.name) {
    return {
      final: false,
      reason: Reasons.NameConflict,
      message: `${what} is still held by an earlier IssueRun ${holder.name} (uid ${holder.uid}), which was deleted; the run waits until the garbage collector has removed it`,
      maxRetryMs: COLLECTED_SOON_RETRY_MS,
    };
  }
  const kubectl = `kubectl delete ${target.kind.toLowerCase()} ${target.name} -n ${target.namespace}`;
  return {
    final: false,
    reason: Reasons.NameConflict,
    message: `${what} exists and is not this IssueRun's (not owned by uid ${target.ownerUid}); the run waits until it is gone: ${kubectl}`,
  };
}

/**
 * Creates an object the run owns under its deterministic name. 409 means it exists: when
 * it is the run's own (made before, a cache not caught up yet) that is success; when it is
 * not (left by `--cascade=orphan`, made by hand), the run cannot go on until it is gone.
 * Refusals the run must hear about throw CreateRefused; transient errors (5xx, 429,
 * network) throw as they are, for the work queue's backoff.
 */
export async function createOwned(client: KubeClient, target: CreateTarget): Promise<Created> {
  if (target.kind === 'Pod') failpoint('before-pod-create');
  try {
    const object = await client.request<{ metadata?: V1ObjectMeta }>({
      method: 'POST',
      path: target.collection,
      body: target.body,
      // Only the metadata is read back (ownership, the inputs' digest annotation).
      headers: { Accept: ACCEPT_METADATA_ONLY },
    });
    return { outcome: 'created', object };
  } catch (error) {
    if (!isConflict(error)) {
      const failure = error instanceof KubeApiError ? refusal(error, target) : undefined;
      throw failure ? new CreateRefused(failure) : error;
    }
  }
  const existing = await client.request<{ metadata?: V1ObjectMeta }>({
    path: `${target.collection}/${encodeURIComponent(target.name)}`,
    headers: { Accept: ACCEPT_METADATA_ONLY },
  });
  if (controllerOf(existing)?.uid !== target.ownerUid) {
    throw new CreateRefused(nameConflict(target, existing));
  }
  return { outcome: 'existing', object: existing };
}
