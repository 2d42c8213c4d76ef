import {
  KUEUE_JOB_UID_LABEL,
  KUEUE_POD_GROUP_LABEL,
  Reasons,
  type IssueRun,
  type Workflow,
} from '../../api/index.js';
import type { KubeClient, ResourceRef } from '../runtime/client.js';
import { resourcePath } from '../runtime/client.js';
import { lookUpObject } from '../runtime/lookup.js';
import type { PodObject } from '../shared/resources.js';
import { podQueueName, runQueueName } from './kueue.js';
import { queuedOutcome } from './pod-status.js';
import { REQUEUE_MS } from './requeue.js';
import type { SlotView } from './status.js';

/**
 * What the controller asks Kueue's API (kueue.x-k8s.io/v1beta2), read only: does the
 * LocalQueue a run names exist, and why does Kueue hold a queued attempt (docs/queues.md).
 */
const KUEUE_API = { group: 'kueue.x-k8s.io', version: 'v1beta2' } as const;
export const LOCAL_QUEUES: ResourceRef = { ...KUEUE_API, plural: 'localqueues' };
export const WORKLOADS: ResourceRef = { ...KUEUE_API, plural: 'workloads' };

/**
 * Why a run that names a LocalQueue cannot start: Kueue is not installed (its API is not
 * served), or the LocalQueue does not exist. A Pod made then would wait forever (Kueue's
 * webhook is absent) or be held by a queue nobody serves. Null: the queue is there, or the
 * run names none. A 403 proves nothing (a controller with fewer verbs): the run goes on.
 */
export async function missingLocalQueue(
  client: KubeClient,
  run: IssueRun,
  workflow: Workflow,
): Promise<{ reason: string; message: string } | null> {
  const name = runQueueName(run, workflow);
  if (name === undefined) return null;
  const namespace = run.metadata.namespace ?? '';
  const where =
    run.spec.queueName === undefined ? `Workflow ${workflow.metadata.name}` : 'this IssueRun';
  const found = await lookUpObject(client, LOCAL_QUEUES, namespace, name);
  switch (found.kind) {
    case 'found':
    case 'forbidden':
      return null;
    case 'notServed':
      return {
        reason: Reasons.KueueNotInstalled,
        message: `spec.queueName of ${where} is ${name}, but Kueue is not installed: kueue.x-k8s.io/v1beta2 localqueues is not served by this cluster; no Pod is made until it is (or spec.queueName is removed)`,
      };
    case 'notFound':
      return {
        reason: Reasons.LocalQueueNotFound,
        message: `waiting for LocalQueue ${name} in namespace ${namespace} (spec.queueName of ${where}): not found; no Pod is made until it exists`,
      };
  }
}

interface WorkloadCondition {
  type?: string;
  status?: string;
  message?: string;
}

interface WorkloadList {
  items?: { status?: { conditions?: WorkloadCondition[] } }[];
}

/**
 * Kueue's own words on a held Workload: why its quota is not reserved (no room in the
 * ClusterQueue, a stopped queue), else why it is not admitted. Undefined when it says none.
 */
export function workloadWaitMessage(conditions: readonly WorkloadCondition[]): string | undefined {
  for (const type of ['QuotaReserved', 'Admitted']) {
    const condition = conditions.find((entry) => entry.type === type);
    if (condition?.status === 'False' && condition.message) return condition.message;
  }
  return undefined;
}

/** The Workload Kueue made for a Pod: the Pod group's, else the single Pod's (by its uid). */
function workloadQuery(pod: PodObject): Record<string, string> {
  const group = pod.metadata?.labels?.[KUEUE_POD_GROUP_LABEL];
  if (group !== undefined) return { fieldSelector: `metadata.name=${group}` };
  return { labelSelector: `${KUEUE_JOB_UID_LABEL}=${pod.metadata?.uid ?? ''}` };
}

/**
 * The slots Kueue holds, with Kueue's reason in their message, looked at again every
 * REQUEUE_MS.queued. A Workload that cannot be read (not made yet, no verb, Kueue gone) leaves
 * the slot's own words: a queued slot never fails for what it cannot read.
 */
export async function withKueueWords(
  client: KubeClient,
  namespace: string,
  views: readonly SlotView[],
  pods: readonly PodObject[],
): Promise<SlotView[]> {
  return Promise.all(
    views.map(async (view) => {
      if (view.outcome?.reason !== 'Queued') return view;
      const pod = pods.find((candidate) => candidate.metadata?.name === view.podName);
      const queue = pod ? podQueueName(pod) : undefined;
      if (!pod || queue === undefined) return view;
      const said = await kueueSays(client, namespace, pod);
      const outcome = queuedOutcome(queue, said);
      return { ...view, outcome: { ...outcome, recheckAfterMs: REQUEUE_MS.queued } };
    }),
  );
}

async function kueueSays(
  client: KubeClient,
  namespace: string,
  pod: PodObject,
): Promise<string | undefined> {
  try {
    const list = await client.request<WorkloadList>({
      path: resourcePath(WORKLOADS, namespace),
      query: workloadQuery(pod),
    });
    const conditions = list.items?.[0]?.status?.conditions ?? [];
    return workloadWaitMessage(conditions);
  } catch {
    return undefined;
  }
}
