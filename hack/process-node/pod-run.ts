import { join } from 'node:path';
import type { CoreV1Api, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import type { ContainerProcess } from './container-process.js';
import type { LogRegistry } from './log-registry.js';
import type { ObjectSource } from './objects.js';
import { newRecord, type PodModel } from './pod-status.js';
import { statusReporter, type StatusReporter } from './status-reporter.js';
import { sleep, type ImageMap, type LogFn } from './types.js';
import type { FilesContext } from './volume-files.js';
import type { VolumeHosts } from './volumes.js';

// The state one Pod's worker shares between its steps (volumes, containers, status, stop).
// It is one plain object passed to plain functions, rather than variables captured by one
// long closure, so that each step can live in its own file and be read on its own.

/** What a worker needs from the node: shared by all of the node's Pods. */
export interface WorkerDeps {
  core: CoreV1Api;
  apiServer: string;
  dataDir: string;
  objects: ObjectSource;
  imageMap: ImageMap;
  logs: LogRegistry;
  log: LogFn;
}

/** Why the Pod's containers are being stopped. */
export interface Stop {
  /** Set when the Pod fails for it (DeadlineExceeded); a deletion has none. */
  reason?: string;
  message?: string;
  /** The Pod object is to be deleted once its containers are down (a graceful deletion). */
  deleting: boolean;
}

/** One Pod on this node, from its first watch event to its deletion. */
export interface PodRun {
  readonly deps: WorkerDeps;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** `<dataDir>/pods/<uid>`: volumes, start scripts and logs, removed with the Pod. */
  readonly podDir: string;
  /** From the first event: containers and volumes of a Pod cannot change after creation. */
  readonly spec: V1PodSpec;
  readonly model: PodModel;
  readonly reporter: StatusReporter;
  /** TokenRequest results, kept so that refreshing a projected volume does not mint again. */
  readonly tokens: Map<string, string>;
  /** Container name → its live process: what a stop signals. */
  readonly running: Map<string, ContainerProcess>;
  /** The newest Pod from the watch: labels and annotations for env and downward volumes. */
  current: V1Pod;
  /** Volume name → host path, once the volumes exist. */
  hosts: VolumeHosts | undefined;
  /** Labels and annotations last written to downward volumes, to skip no-op refreshes. */
  lastMeta: string;
  /** Downward-volume refreshes run one after another; the end of the run waits for them. */
  refreshing: Promise<void>;
  /** The Pod is gone or the node is stopping: report nothing more, delete nothing. */
  silent: boolean;
  /** Every container is down and the final status is sent. */
  finished: boolean;
  stop: Stop | undefined;
  /** When the stop's SIGKILL is due (ms since the epoch); Infinity while none is planned. */
  killAt: number;
  killTimer: NodeJS.Timeout | undefined;
  /** Resolves when a stop begins, so that every wait (back-off, retry) ends at once. */
  readonly stopped: Promise<void>;
  readonly wake: () => void;
}

/** Restart back-off and config-error retries both double up to this. */
export const MAX_BACKOFF_MS = 10_000;

/** What downward volumes are made from; a change means they must be rewritten. */
export const metaKey = (pod: V1Pod): string =>
  JSON.stringify([pod.metadata?.labels ?? {}, pod.metadata?.annotations ?? {}]);

export function newPodRun(deps: WorkerDeps, initial: V1Pod): PodRun {
  const namespace = initial.metadata?.namespace ?? 'default';
  const name = initial.metadata?.name ?? '';
  const uid = initial.metadata?.uid ?? '';
  const spec = initial.spec ?? { containers: [] };
  const hasInit = (spec.initContainers ?? []).length > 0;
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (wake = resolve));
  return {
    deps,
    namespace,
    name,
    uid,
    podDir: join(deps.dataDir, 'pods', uid),
    spec,
    model: {
      phase: 'Pending',
      // Listed objects carry Dates, watched ones strings: normalize either.
      startTime: new Date(initial.status?.startTime ?? Date.now()).toISOString(),
      initContainers: (spec.initContainers ?? []).map((c) =>
        newRecord(c.name, c.image, 'PodInitializing'),
      ),
      containers: spec.containers.map((c) =>
        newRecord(c.name, c.image, hasInit ? 'PodInitializing' : 'ContainerCreating'),
      ),
      conditionTimes: new Map(),
    },
    reporter: statusReporter(deps.core, namespace, name, deps.log),
    tokens: new Map(),
    running: new Map(),
    current: initial,
    hosts: undefined,
    lastMeta: metaKey(initial),
    refreshing: Promise.resolve(),
    silent: false,
    finished: false,
    stop: undefined,
    killAt: Infinity,
    killTimer: undefined,
    stopped,
    wake,
  };
}

export const hasInitContainers = (run: PodRun): boolean =>
  (run.spec.initContainers ?? []).length > 0;

/** Sleeps, but no longer than until a stop begins. */
export const pause = (run: PodRun, ms: number): Promise<void> =>
  Promise.race([sleep(ms), run.stopped]);

/** Volume files are rendered from the newest Pod (downward API) and the node's API access. */
export const filesContext = (run: PodRun): FilesContext => ({
  pod: run.current,
  objects: run.deps.objects,
  core: run.deps.core,
  tokens: run.tokens,
});

/** `<namespace>/<name>: <text>` in the node's log. */
export const logFor = (run: PodRun, text: string): void =>
  run.deps.log(`${run.namespace}/${run.name}: ${text}`);
