import type { V1Container } from '@kubernetes/client-node';
import { startAttempt, type Terminated } from './container-run.js';
import { logKey } from './log-registry.js';
import { asConfigError, publish, waitOnConfigError } from './pod-report.js';
import { MAX_BACKOFF_MS, pause, type PodRun } from './pod-run.js';
import type { ContainerRecord } from './pod-status.js';

// One container of a Pod through all its attempts: start, wait for the exit, and restart or
// not by the Pod's restartPolicy, with the kubelet's back-off. How one attempt is set up and
// started (env, mounts, process) is in container-run.ts.

/** How a container's run ended, for the caller deciding whether the Pod goes on. */
export type Outcome = 'ok' | 'failed' | 'stopped';

/** ContainerCannotRun is terminal: the kubelet reports it as a termination with exit 128. */
function cannotRun(message: string): Terminated {
  const now = new Date().toISOString();
  return {
    exitCode: 128,
    reason: 'ContainerCannotRun',
    message,
    startedAt: now,
    finishedAt: now,
  };
}

/**
 * One attempt, to its termination. A config error that may heal (a missing object) is
 * retried with back-off; a spec that cannot start at all ends as a ContainerCannotRun
 * termination. Undefined when the Pod was stopped before the attempt started.
 */
async function attemptOnce(
  run: PodRun,
  container: V1Container,
  record: ContainerRecord,
  isInit: boolean,
): Promise<Terminated | undefined> {
  const { deps, model } = run;
  const key = logKey(run.namespace, run.name, container.name);
  for (let delay = 1000; !run.stop; delay = Math.min(delay * 2, MAX_BACKOFF_MS)) {
    let attempt;
    try {
      attempt = await startAttempt(
        {
          pod: run.current,
          podDir: run.podDir,
          hosts: run.hosts ?? new Map<string, string>(),
          objects: deps.objects,
          apiServer: deps.apiServer,
          imageMap: deps.imageMap,
        },
        container,
        record.restartCount,
      );
    } catch (err) {
      const configError = asConfigError(err);
      if (configError.reason === 'ContainerCannotRun') return cannotRun(configError.message);
      await waitOnConfigError(run, [record], configError, delay);
      continue;
    }
    run.running.set(container.name, attempt.process);
    // A stop that began while the attempt was being set up missed this process.
    if (run.stop) attempt.process.signal('SIGKILL');
    record.containerID = attempt.containerID;
    record.state = { running: { startedAt: attempt.startedAt } };
    const previous = deps.logs.get(key)?.attempts ?? [];
    deps.logs.set(key, { attempts: [...previous, attempt.logPath], running: true });
    if (!isInit && model.phase === 'Pending') model.phase = 'Running';
    publish(run);
    const term = await attempt.finished;
    run.running.delete(container.name);
    deps.logs.set(key, { attempts: [...previous, attempt.logPath], running: false });
    return term;
  }
  return undefined;
}

/**
 * Whether the kubelet starts the container again after this exit. An init container must
 * succeed before the Pod goes on, so it is retried on failure unless the policy is Never.
 */
function restarts(policy: string, isInit: boolean, ok: boolean): boolean {
  return isInit
    ? !ok && policy !== 'Never'
    : policy === 'Always' || (policy === 'OnFailure' && !ok);
}

/**
 * Runs the container until it ends for good: an exit the restartPolicy does not restart, or
 * a stop. Between attempts it waits in CrashLoopBackOff, 1 s doubling to 10 s by restartCount.
 */
export async function runContainer(
  run: PodRun,
  container: V1Container,
  record: ContainerRecord,
  isInit: boolean,
): Promise<Outcome> {
  const policy = run.spec.restartPolicy ?? 'Always';
  for (;;) {
    const term = await attemptOnce(run, container, record, isInit);
    if (!term) return 'stopped';
    record.state = { terminated: term };
    const ok = term.exitCode === 0;
    if (run.stop || !restarts(policy, isInit, ok)) {
      publish(run);
      return ok ? 'ok' : run.stop ? 'stopped' : 'failed';
    }
    const backoff = Math.min(1000 * 2 ** record.restartCount, MAX_BACKOFF_MS);
    record.lastState = { terminated: term };
    record.restartCount += 1;
    record.state = {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${backoff / 1000}s restarting failed container=${container.name} pod=${run.name}_${run.namespace}(${run.uid})`,
      },
    };
    publish(run);
    await pause(run, backoff);
  }
}
