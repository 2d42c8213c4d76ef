import { POD_IP } from './field-ref.js';

/** One container's state, in the API's JSON shape (times as RFC 3339 strings). */
export type ContainerState =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | {
      terminated: {
        exitCode: number;
        signal?: number;
        reason: string;
        message?: string;
        startedAt: string;
        finishedAt: string;
        containerID?: string;
      };
    };

export interface ContainerRecord {
  name: string;
  image: string;
  state: ContainerState;
  lastState?: ContainerState;
  restartCount: number;
  containerID?: string;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

export interface PodModel {
  phase: PodPhase;
  reason?: string;
  message?: string;
  startTime: string;
  initContainers: ContainerRecord[];
  containers: ContainerRecord[];
  /** Condition type → [status, lastTransitionTime], so transitions keep their time. */
  conditionTimes: Map<string, [string, string]>;
}

export function newRecord(
  name: string,
  image: string | undefined,
  reason: string,
): ContainerRecord {
  return { name, image: image ?? '', state: { waiting: { reason } }, restartCount: 0 };
}

const isRunning = (r: ContainerRecord) => 'running' in r.state;
const succeeded = (r: ContainerRecord) =>
  'terminated' in r.state && r.state.terminated.exitCode === 0;

function condition(
  model: PodModel,
  type: string,
  ok: boolean,
  reason: string | undefined,
  message: string | undefined,
) {
  const status = ok ? 'True' : 'False';
  const previous = model.conditionTimes.get(type);
  const time = previous && previous[0] === status ? previous[1] : new Date().toISOString();
  model.conditionTimes.set(type, [status, time]);
  return {
    type,
    status,
    lastProbeTime: null,
    lastTransitionTime: time,
    ...(ok ? {} : { reason, message }),
  };
}

function containerStatus(r: ContainerRecord, ready: boolean) {
  return {
    name: r.name,
    image: r.image,
    imageID: '',
    ...(r.containerID ? { containerID: r.containerID } : {}),
    state: r.state,
    lastState: r.lastState ?? {},
    ready,
    started: isRunning(r),
    restartCount: r.restartCount,
  };
}

/**
 * The Pod status the node reports, built whole from its model: the kubelet's conditions
 * (readiness probes are not run, so a running container is ready).
 */
export function buildPodStatus(model: PodModel) {
  const terminal = model.phase === 'Succeeded' || model.phase === 'Failed';
  const initPending = model.initContainers.filter((r) => !succeeded(r)).map((r) => r.name);
  const unready = model.containers.filter((r) => terminal || !isRunning(r)).map((r) => r.name);
  const readyReason = terminal ? 'PodCompleted' : 'ContainersNotReady';
  const readyMessage = terminal
    ? undefined
    : `containers with unready status: [${unready.join(' ')}]`;
  const initialized = initPending.length === 0;
  return {
    phase: model.phase,
    ...(model.reason ? { reason: model.reason } : {}),
    ...(model.message ? { message: model.message } : {}),
    hostIP: POD_IP,
    hostIPs: [{ ip: POD_IP }],
    podIP: POD_IP,
    podIPs: [{ ip: POD_IP }],
    startTime: model.startTime,
    conditions: [
      condition(model, 'PodReadyToStartContainers', true, undefined, undefined),
      condition(
        model,
        'Initialized',
        initialized,
        'ContainersNotInitialized',
        `containers with incomplete status: [${initPending.join(' ')}]`,
      ),
      condition(model, 'Ready', unready.length === 0, readyReason, readyMessage),
      condition(model, 'ContainersReady', unready.length === 0, readyReason, readyMessage),
      condition(model, 'PodScheduled', true, undefined, undefined),
    ],
    ...(model.initContainers.length
      ? { initContainerStatuses: model.initContainers.map((r) => containerStatus(r, succeeded(r))) }
      : {}),
    containerStatuses: model.containers.map((r) => containerStatus(r, !terminal && isRunning(r))),
  };
}

export type PodStatusJson = ReturnType<typeof buildPodStatus>;
