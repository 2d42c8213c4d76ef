import {
  makeInformer,
  type CoreV1Api,
  type Informer,
  type KubeConfig,
  type ObjectCache,
  type V1Pod,
} from '@kubernetes/client-node';
import { startPodWorker, type PodWorker, type WorkerDeps } from './pod-worker.js';
import { describeError, httpStatus, type LogFn } from './types.js';

export interface PodWatcher {
  stop(): Promise<void>;
}

const RESTART_MS = 1000;
const isTerminal = (pod: V1Pod) =>
  pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/**
 * There is no scheduler: every pending Pod for the default scheduler is bound to this node
 * through the binding subresource. (Several process nodes on one cluster race; the loser
 * gets a conflict and leaves the Pod to the winner.)
 */
async function bindPod(
  core: CoreV1Api,
  pod: V1Pod,
  nodeName: string,
  log: LogFn,
): Promise<'done' | 'retry'> {
  const namespace = pod.metadata?.namespace ?? 'default';
  const name = pod.metadata?.name ?? '';
  try {
    await core.createNamespacedPodBinding({
      namespace,
      name,
      body: {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name, namespace, uid: pod.metadata?.uid },
        target: { apiVersion: 'v1', kind: 'Node', name: nodeName },
      },
    });
    return 'done';
  } catch (err) {
    const code = httpStatus(err);
    if (code === 409 || code === 404) return 'done';
    log(`bind ${namespace}/${name}: ${describeError(err)}; retrying`);
    return 'retry';
  }
}

/**
 * Binds until bound, taken or gone. A failed bind must be retried here: the Pod does not
 * change, so no watch event would ever bring it back (an apiserver restart mid-bind left
 * Pods Pending forever; found by the chaos suite).
 */
export async function bindUntilDone(
  core: CoreV1Api,
  pod: V1Pod,
  nodeName: string,
  log: LogFn,
  stopped: () => boolean,
): Promise<void> {
  for (let attempt = 0; !stopped(); attempt++) {
    if ((await bindPod(core, pod, nodeName, log)) === 'done') return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 5_000)));
  }
}

/**
 * A Pod the scheduler would bind here. One with scheduling gates (Kueue's admission gate) is
 * not: a scheduler leaves it alone until the last gate is removed (the Pod's update then
 * brings it back through the watch).
 */
function wantsBinding(pod: V1Pod): boolean {
  const scheduler = pod.spec?.schedulerName ?? 'default-scheduler';
  return (
    !pod.spec?.nodeName &&
    (pod.spec?.schedulingGates ?? []).length === 0 &&
    !pod.metadata?.deletionTimestamp &&
    scheduler === 'default-scheduler' &&
    !isTerminal(pod)
  );
}

/** Watches all Pods (relisting on every error) and keeps one worker per Pod of this node. */
export async function watchPods(
  kubeConfig: KubeConfig,
  core: CoreV1Api,
  nodeName: string,
  deps: WorkerDeps,
): Promise<PodWatcher> {
  const { log } = deps;
  const workers = new Map<string, PodWorker>();
  const binding = new Set<string>();
  let stopped = false;

  const onPod = (pod: V1Pod) => {
    if (stopped) return;
    const uid = pod.metadata?.uid ?? '';
    if (wantsBinding(pod)) {
      if (binding.has(uid)) return;
      binding.add(uid);
      void bindUntilDone(core, pod, nodeName, log, () => stopped).finally(() =>
        binding.delete(uid),
      );
      return;
    }
    if (pod.spec?.nodeName !== nodeName) return;
    const worker = workers.get(uid);
    if (worker) {
      worker.update(pod);
      return;
    }
    if (isTerminal(pod)) {
      // Finished before this node process started: only a pending deletion is left to do.
      if (pod.metadata?.deletionTimestamp) {
        const namespace = pod.metadata.namespace ?? 'default';
        const name = pod.metadata.name ?? '';
        core
          .deleteNamespacedPod({
            namespace,
            name,
            body: { gracePeriodSeconds: 0, preconditions: { uid } },
          })
          .catch((err) => log(`delete ${namespace}/${name}: ${describeError(err)}`));
      }
      return;
    }
    const started = startPodWorker(deps, pod);
    workers.set(uid, started);
    started.update(pod);
  };

  const onDelete = (pod: V1Pod) => {
    const uid = pod.metadata?.uid ?? '';
    const worker = workers.get(uid);
    if (!worker) return;
    workers.delete(uid);
    worker.vanished();
  };

  const safely = (fn: (pod: V1Pod) => void) => (pod: V1Pod) => {
    try {
      fn(pod);
    } catch (err) {
      log(`pod event for ${pod.metadata?.namespace}/${pod.metadata?.name}: ${describeError(err)}`);
    }
  };

  const informer: Informer<V1Pod> & ObjectCache<V1Pod> = makeInformer(
    kubeConfig,
    '/api/v1/pods',
    () => core.listPodForAllNamespaces(),
  );
  informer.on('add', safely(onPod));
  informer.on('update', safely(onPod));
  informer.on('delete', safely(onDelete));
  informer.on('error', (err: unknown) => {
    if (stopped) return;
    log(`pod watch: ${describeError(err)}; restarting`);
    setTimeout(() => {
      if (!stopped)
        informer.start().catch((e: unknown) => log(`pod watch restart: ${describeError(e)}`));
    }, RESTART_MS);
  });
  await informer.start();

  return {
    async stop() {
      stopped = true;
      await informer.stop();
      await Promise.all([...workers.values()].map((w) => w.shutdown()));
      workers.clear();
    },
  };
}
