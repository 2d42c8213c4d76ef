import { PatchStrategy, setHeaderOptions, type CoreV1Api } from '@kubernetes/client-node';
import { describeError, httpStatus, sleep, type LogFn } from './types.js';

/**
 * A strategic merge patch, as the kubelet sends: conditions merge by type, so a condition
 * another controller set (Kueue's TerminationTarget, a DisruptionTarget) stays; a JSON merge
 * patch would replace the list with the node's own. Container statuses are replaced whole.
 */
const statusPatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

export interface StatusReporter {
  /** Records the latest status; it is sent soon, once, whatever came before it. */
  set(status: object): void;
  /** Resolves when the latest status has been sent (or the Pod is gone). */
  flush(): Promise<void>;
}

/**
 * Coalesces status writes: one patch in flight at a time, always the newest status, and
 * nothing sent when it did not change. Failures are retried; a vanished Pod ends it.
 */
export function statusReporter(
  core: CoreV1Api,
  namespace: string,
  name: string,
  log: LogFn,
): StatusReporter {
  let desired: string | undefined;
  let sent: string | undefined;
  let loop: Promise<void> | undefined;
  let gone = false;

  const drain = async () => {
    while (!gone && desired !== undefined && desired !== sent) {
      const body = desired;
      try {
        await core.patchNamespacedPodStatus(
          { namespace, name, body: { status: JSON.parse(body) as object } },
          statusPatch,
        );
        sent = body;
      } catch (err) {
        if (httpStatus(err) === 404) {
          gone = true;
          return;
        }
        log(`status of ${namespace}/${name}: ${describeError(err)}`);
        await sleep(1000);
      }
    }
  };

  const kick = () => {
    loop ??= drain().finally(() => {
      loop = undefined;
      if (!gone && desired !== sent) kick();
    });
  };

  return {
    set(status) {
      desired = JSON.stringify(status);
      kick();
    },
    async flush() {
      while (loop) await loop;
    },
  };
}
