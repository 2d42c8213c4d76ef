import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { CoreV1Api, V1Container, V1Pod } from '@kubernetes/client-node';
import type { ContainerProcess } from './container-process.js';
import { startAttempt, type Terminated } from './container-run.js';
import { logKey, type LogRegistry } from './log-registry.js';
import type { ObjectSource } from './objects.js';
import { buildPodStatus, newRecord, type ContainerRecord, type PodModel } from './pod-status.js';
import { statusReporter } from './status-reporter.js';
import {
  describeError,
  httpStatus,
  PodConfigError,
  sleep,
  type ImageMap,
  type LogFn,
} from './types.js';
import type { FilesContext } from './volume-files.js';
import { materializeVolumes, refreshDownwardVolumes, type VolumeHosts } from './volumes.js';

export interface WorkerDeps {
  core: CoreV1Api;
  apiServer: string;
  dataDir: string;
  objects: ObjectSource;
  imageMap: ImageMap;
  logs: LogRegistry;
  log: LogFn;
}

export interface PodWorker {
  /** A newer version of the Pod from the watch (labels, annotations, deletion). */
  update(pod: V1Pod): void;
  /** The Pod object is gone from the API: kill at once, write nothing. */
  vanished(): void;
  /** The node is stopping: kill at once, write nothing, wait for the end. */
  shutdown(): Promise<void>;
  done: Promise<void>;
}

type Outcome = 'ok' | 'failed' | 'stopped';
interface Stop {
  reason?: string;
  message?: string;
  deleting: boolean;
}

const MAX_BACKOFF_MS = 10_000;
const metaKey = (pod: V1Pod) =>
  JSON.stringify([pod.metadata?.labels ?? {}, pod.metadata?.annotations ?? {}]);
const isTerminated = (r: ContainerRecord) => 'terminated' in r.state;

/** Runs one Pod bound to this node, from volumes to its final status and deletion. */
export function startPodWorker(deps: WorkerDeps, initial: V1Pod): PodWorker {
  const { core, log } = deps;
  const namespace = initial.metadata?.namespace ?? 'default';
  const name = initial.metadata?.name ?? '';
  const uid = initial.metadata?.uid ?? '';
  const podDir = join(deps.dataDir, 'pods', uid);
  const spec = initial.spec ?? { containers: [] };
  const policy = spec.restartPolicy ?? 'Always';
  const reporter = statusReporter(core, namespace, name, log);
  const tokens = new Map<string, string>();
  const running = new Map<string, ContainerProcess>();
  const hasInit = (spec.initContainers ?? []).length > 0;
  const model: PodModel = {
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
  };
  let current = initial;
  let lastMeta = metaKey(initial);
  let hosts: VolumeHosts | undefined;
  let refreshing = Promise.resolve();
  let silent = false;
  let finished = false;
  let stop: Stop | undefined;
  let killAt = Infinity;
  let killTimer: NodeJS.Timeout | undefined;
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (wake = resolve));
  const pause = (ms: number) => Promise.race([sleep(ms), stopped]);
  const publish = () => {
    if (!silent) reporter.set(buildPodStatus(model));
  };
  const filesContext = (): FilesContext => ({ pod: current, objects: deps.objects, core, tokens });

  const maybeRefresh = () => {
    const meta = metaKey(current);
    if (meta === lastMeta || !hosts) return;
    lastMeta = meta;
    refreshing = refreshing
      .then(() => refreshDownwardVolumes(filesContext(), podDir))
      .catch((err) => log(`${namespace}/${name}: downward API refresh: ${describeError(err)}`));
  };

  const killAll = (sig: NodeJS.Signals) => {
    for (const proc of running.values()) proc.signal(sig);
  };

  /** SIGTERM now, SIGKILL after the grace period; a later, shorter grace wins. */
  const beginStop = (next: Stop, graceSeconds: number) => {
    if (!stop) {
      if (!silent)
        log(`${namespace}/${name}: stopping (${next.reason ?? 'deleted'}, grace ${graceSeconds}s)`);
      stop = next;
      killAll('SIGTERM');
      wake();
    } else if (next.deleting) stop.deleting = true;
    const at = Date.now() + graceSeconds * 1000;
    if (at >= killAt) return;
    killAt = at;
    clearTimeout(killTimer);
    killTimer = setTimeout(() => killAll('SIGKILL'), Math.max(0, at - Date.now()));
  };

  const waitOnConfigError = async (
    records: ContainerRecord[],
    err: PodConfigError,
    delay: number,
  ) => {
    for (const r of records) r.state = { waiting: { reason: err.reason, message: err.message } };
    for (const r of records) {
      deps.logs.set(logKey(namespace, name, r.name), {
        attempts: [],
        running: false,
        waiting: err.reason,
      });
    }
    publish();
    if (err.retryable) await pause(delay);
    else await stopped;
  };

  const asConfigError = (err: unknown): PodConfigError =>
    err instanceof PodConfigError
      ? err
      : new PodConfigError('CreateContainerConfigError', describeError(err), true);

  const prepareVolumes = async (): Promise<VolumeHosts | undefined> => {
    for (let delay = 1000; !stop; delay = Math.min(delay * 2, MAX_BACKOFF_MS)) {
      try {
        return await materializeVolumes(filesContext(), podDir, join(deps.dataDir, 'pvs'));
      } catch (err) {
        log(`${namespace}/${name}: volumes: ${describeError(err)}`);
        await waitOnConfigError(
          [...model.initContainers, ...model.containers],
          asConfigError(err),
          delay,
        );
      }
    }
    return undefined;
  };

  /** One attempt; a spec that cannot start at all ends as a ContainerCannotRun termination. */
  const attemptOnce = async (container: V1Container, record: ContainerRecord, isInit: boolean) => {
    const key = logKey(namespace, name, container.name);
    for (let delay = 1000; !stop; delay = Math.min(delay * 2, MAX_BACKOFF_MS)) {
      let attempt;
      try {
        attempt = await startAttempt(
          {
            pod: current,
            podDir,
            hosts: hosts ?? new Map(),
            objects: deps.objects,
            apiServer: deps.apiServer,
            imageMap: deps.imageMap,
          },
          container,
          record.restartCount,
        );
      } catch (err) {
        const configError = asConfigError(err);
        if (configError.reason === 'ContainerCannotRun') {
          const now = new Date().toISOString();
          const term: Terminated = {
            exitCode: 128,
            reason: 'ContainerCannotRun',
            message: configError.message,
            startedAt: now,
            finishedAt: now,
          };
          return term;
        }
        await waitOnConfigError([record], configError, delay);
        continue;
      }
      running.set(container.name, attempt.process);
      if (stop) attempt.process.signal('SIGKILL');
      record.containerID = attempt.containerID;
      record.state = { running: { startedAt: attempt.startedAt } };
      const previous = deps.logs.get(key)?.attempts ?? [];
      deps.logs.set(key, { attempts: [...previous, attempt.logPath], running: true });
      if (!isInit && model.phase === 'Pending') model.phase = 'Running';
      publish();
      const term = await attempt.finished;
      running.delete(container.name);
      deps.logs.set(key, { attempts: [...previous, attempt.logPath], running: false });
      return term;
    }
    return undefined;
  };

  const runContainer = async (
    container: V1Container,
    record: ContainerRecord,
    isInit: boolean,
  ): Promise<Outcome> => {
    for (;;) {
      const term = await attemptOnce(container, record, isInit);
      if (!term) return 'stopped';
      record.state = { terminated: term };
      const ok = term.exitCode === 0;
      const restart = isInit
        ? !ok && policy !== 'Never'
        : policy === 'Always' || (policy === 'OnFailure' && !ok);
      if (stop || !restart) {
        publish();
        return ok ? 'ok' : stop ? 'stopped' : 'failed';
      }
      const backoff = Math.min(1000 * 2 ** record.restartCount, MAX_BACKOFF_MS);
      record.lastState = { terminated: term };
      record.restartCount += 1;
      record.state = {
        waiting: {
          reason: 'CrashLoopBackOff',
          message: `back-off ${backoff / 1000}s restarting failed container=${container.name} pod=${name}_${namespace}(${uid})`,
        },
      };
      publish();
      await pause(backoff);
    }
  };

  const finalPhase = (initFailed: boolean) => {
    if (stop?.reason) {
      model.phase = 'Failed';
      model.reason = stop.reason;
      model.message = stop.message;
    } else if (initFailed) model.phase = 'Failed';
    else if (model.containers.every(isTerminated)) {
      const allOk = model.containers.every(
        (r) => 'terminated' in r.state && r.state.terminated.exitCode === 0,
      );
      model.phase = allOk ? 'Succeeded' : 'Failed';
    }
  };

  const deleteNow = async () => {
    log(`${namespace}/${name}: terminated; deleting the Pod object`);
    try {
      // With a body the apiserver reads the options from it alone, not from the query.
      await core.deleteNamespacedPod({
        namespace,
        name,
        body: { gracePeriodSeconds: 0, preconditions: { uid } },
      });
    } catch (err) {
      const code = httpStatus(err);
      if (code !== 404) log(`${namespace}/${name}: delete: ${code} ${describeError(err)}`);
    }
  };

  const run = async () => {
    publish();
    const deadline = spec.activeDeadlineSeconds;
    const deadlineTimer =
      deadline === undefined
        ? undefined
        : setTimeout(
            () =>
              beginStop(
                {
                  reason: 'DeadlineExceeded',
                  message: 'Pod was active on the node longer than the specified deadline',
                  deleting: false,
                },
                spec.terminationGracePeriodSeconds ?? 30,
              ),
            Math.max(0, Date.parse(model.startTime) + deadline * 1000 - Date.now()),
          );
    let initFailed = false;
    hosts = await prepareVolumes();
    maybeRefresh();
    if (hosts) {
      for (const r of [...model.initContainers, ...model.containers]) {
        if ('waiting' in r.state)
          r.state = { waiting: { reason: hasInit ? 'PodInitializing' : 'ContainerCreating' } };
      }
      for (const [i, container] of (spec.initContainers ?? []).entries()) {
        const record = model.initContainers[i];
        if (!record || (await runContainer(container, record, true)) !== 'ok') {
          initFailed = !stop;
          break;
        }
      }
      if (!initFailed && !stop) {
        for (const r of model.containers) r.state = { waiting: { reason: 'ContainerCreating' } };
        await Promise.all(
          spec.containers.map((c, i) =>
            runContainer(c, model.containers[i] ?? newRecord(c.name, c.image, ''), false),
          ),
        );
      }
    }
    clearTimeout(deadlineTimer);
    clearTimeout(killTimer);
    finalPhase(initFailed);
    publish();
    await reporter.flush();
    await refreshing;
    finished = true;
    if (stop?.deleting && !silent) await deleteNow();
  };

  const done = run().catch((err) =>
    log(`${namespace}/${name}: worker failed: ${describeError(err)}`),
  );

  const cleanup = async () => {
    await done;
    for (const c of [...(spec.initContainers ?? []), ...spec.containers])
      deps.logs.delete(logKey(namespace, name, c.name));
    await rm(podDir, { recursive: true, force: true });
  };

  return {
    update(pod) {
      current = pod;
      const deletion = pod.metadata?.deletionTimestamp;
      if (deletion) {
        if (finished) {
          if (!stop?.deleting) {
            stop = { ...(stop ?? {}), deleting: true };
            void deleteNow();
          }
          return;
        }
        beginStop(
          { deleting: true },
          pod.metadata?.deletionGracePeriodSeconds ?? spec.terminationGracePeriodSeconds ?? 30,
        );
        return;
      }
      maybeRefresh();
    },
    vanished() {
      silent = true;
      beginStop({ deleting: false }, 0);
      void cleanup();
    },
    async shutdown() {
      silent = true;
      beginStop({ deleting: false }, 0);
      await done;
    },
    done,
  };
}
