import { GROUP, ISSUERUN_PLURAL, VERSION } from '../../api/constants.js';
import { AGENT_CONTAINER_NAME } from '../../api/run-pod.js';
import type { IssueRun } from '../../api/index.js';
import {
  getIfExists,
  resourcePath,
  PODS,
  type KubeClient,
  type ResourceRef,
} from '../../controller/runtime/client.js';
import { LABEL_ATTEMPT, LABEL_ISSUERUN, LABEL_SLOT } from '../../controller/shared/constants.js';
import { get, num, records, str, type Json } from '../../server/json.js';

/** What the run commands read of the cluster: IssueRuns, their run Pods, Pod logs, Events. */
export const ISSUERUNS = { group: GROUP, version: VERSION, plural: ISSUERUN_PLURAL };

export async function listIssueRuns(
  client: KubeClient,
  namespace: string | undefined,
): Promise<IssueRun[]> {
  const items: IssueRun[] = [];
  let next: string | undefined;
  do {
    const page = await client.request<{ items?: IssueRun[]; metadata?: { continue?: string } }>({
      path: resourcePath(ISSUERUNS, namespace),
      query: { limit: 500, ...(next ? { continue: next } : {}) },
    });
    items.push(...(page.items ?? []));
    next = page.metadata?.continue || undefined;
  } while (next);
  return items;
}

/** What a run command looks up by name: undefined once it is gone, when the archive answers instead. */
const namedGetter =
  <T>(resource: ResourceRef) =>
  (client: KubeClient, namespace: string, name: string): Promise<T | undefined> =>
    getIfExists<T>(client, resourcePath(resource, namespace, name));

export const getIssueRun = namedGetter<IssueRun>(ISSUERUNS);

export interface RunPod {
  name: string;
  uid: string;
  slot: number;
  attempt: number;
  phase: string;
  node?: string;
  pod: Json;
}

/** The run's Pods (labelled with its name, owned by this uid), by slot then attempt. */
export async function runPods(
  client: KubeClient,
  namespace: string,
  run: { name: string; uid?: string },
): Promise<RunPod[]> {
  const list = await client.request<{ items?: Json[] }>({
    path: resourcePath(PODS, namespace),
    query: { labelSelector: `${LABEL_ISSUERUN}=${run.name}` },
  });
  return records(list.items)
    .filter((pod) => {
      const owners = records(get(pod, 'metadata', 'ownerReferences'));
      // A Pod left by an earlier IssueRun of the same name is not this run's.
      return !run.uid || owners.length === 0 || owners.some((owner) => owner.uid === run.uid);
    })
    .map((pod) => {
      const labels = get(pod, 'metadata', 'labels');
      const label = (key: string) => Number(str(get(labels, key)) ?? '0');
      const node = str(get(pod, 'spec', 'nodeName'));
      return {
        name: str(get(pod, 'metadata', 'name')) ?? '',
        uid: str(get(pod, 'metadata', 'uid')) ?? '',
        slot: label(LABEL_SLOT),
        attempt: label(LABEL_ATTEMPT) || 1,
        phase: str(get(pod, 'status', 'phase')) ?? 'Unknown',
        ...(node ? { node } : {}),
        pod,
      };
    })
    .sort((a, b) => a.slot - b.slot || a.attempt - b.attempt);
}

export const getPod = namedGetter<Json>(PODS);

/** The agent container's state: when it ran, how it ended. */
export function agentState(pod: Json): {
  startedAt?: string;
  finishedAt?: string;
  exitCode?: number;
  reason?: string;
  waiting?: string;
} {
  const status = records(get(pod, 'status', 'containerStatuses')).find(
    (each) => each.name === AGENT_CONTAINER_NAME,
  );
  const running = get(status, 'state', 'running');
  const terminated = get(status, 'state', 'terminated');
  const waiting = str(get(status, 'state', 'waiting', 'reason'));
  const startedAt = str(get(terminated, 'startedAt')) ?? str(get(running, 'startedAt'));
  const finishedAt = str(get(terminated, 'finishedAt'));
  const exitCode = num(get(terminated, 'exitCode'));
  const reason = str(get(terminated, 'reason'));
  return {
    ...(startedAt ? { startedAt } : {}),
    ...(finishedAt ? { finishedAt } : {}),
    ...(exitCode === undefined ? {} : { exitCode }),
    ...(reason ? { reason } : {}),
    ...(waiting ? { waiting } : {}),
  };
}

/**
 * The agent container's log, line by line (pods/log, as `kubectl logs` reads it); with
 * `follow` until the container's log ends.
 */
export function podLog(
  client: KubeClient,
  namespace: string,
  pod: string,
  options: { follow: boolean; onLine: (line: string) => void; signal?: AbortSignal },
): Promise<void> {
  return client.stream({
    path: resourcePath(PODS, namespace, pod, 'log'),
    query: { container: AGENT_CONTAINER_NAME, ...(options.follow ? { follow: true } : {}) },
    onLine: options.onLine,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

export interface LiveEvent {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastTime?: string;
  object: string;
}

/** The Events of an object (the run or one of its Pods), from the core Events API. */
export async function eventsOf(
  client: KubeClient,
  namespace: string,
  uid: string,
): Promise<LiveEvent[]> {
  const list = await client.request<{ items?: Json[] }>({
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
    query: { fieldSelector: `involvedObject.uid=${uid}` },
  });
  return records(list.items).map((event) => {
    const lastTime =
      str(event.lastTimestamp) ??
      str(event.eventTime) ??
      str(get(event, 'metadata', 'creationTimestamp'));
    return {
      type: str(event.type) ?? '',
      reason: str(event.reason) ?? '',
      message: str(event.message) ?? '',
      count: num(event.count) ?? 1,
      ...(lastTime ? { lastTime } : {}),
      object: `${str(get(event, 'involvedObject', 'kind')) ?? ''}/${str(get(event, 'involvedObject', 'name')) ?? ''}`,
    };
  });
}
