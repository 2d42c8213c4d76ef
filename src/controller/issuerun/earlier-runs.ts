import { ISSUERUN_KIND, type IssueRun } from '../../api/index.js';
import type { PodObject } from '../shared/resources.js';

// An IssueRun deleted and made again under its name (`kubectl delete` then `apply`,
// `kubectl replace --force`) can meet what the earlier one owned before the garbage collector
// takes it. A run's first pass creates its Pods beside its inputs to save a round trip; when
// an earlier run of the name may have left inputs, they go first instead, so that no Pod ever
// mounts inputs that are not its run's.

/** How long a deleted run's name is remembered: far longer than the collector takes. */
export const DELETED_NAME_MEMORY_MS = 10 * 60_000;

/** Whether Pods of an earlier IssueRun of the same name are still about. */
export function earlierRunPods(pods: readonly PodObject[], run: IssueRun): boolean {
  return pods.some((pod) =>
    (pod.metadata?.ownerReferences ?? []).some(
      (owner) =>
        owner.controller &&
        owner.kind === ISSUERUN_KIND &&
        owner.name === run.metadata.name &&
        owner.uid !== run.metadata.uid,
    ),
  );
}

/** The run keys whose object this controller saw go, each for DELETED_NAME_MEMORY_MS. */
export function createDeletedNames(now: () => Date) {
  const deletedAt = new Map<string, number>();
  const prune = (at: number) => {
    for (const [key, when] of deletedAt) {
      if (at - when > DELETED_NAME_MEMORY_MS) deletedAt.delete(key);
    }
  };
  return {
    gone(key: string): void {
      const at = now().getTime();
      prune(at);
      deletedAt.set(key, at);
    },
    recentlyGone(key: string): boolean {
      const when = deletedAt.get(key);
      return when !== undefined && now().getTime() - when <= DELETED_NAME_MEMORY_MS;
    },
  };
}
