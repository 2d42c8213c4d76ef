// How long the IssueRun reconciler waits, and when it looks again: the timing policy, apart
// from the ladder that uses it.

/** Least time between two progress writes of one run, unless the deps say otherwise. */
export const DEFAULT_PROGRESS_INTERVAL_MS = 5000;

/** When to look again, by what is awaited. */
export const REQUEUE_MS = {
  /** Pods created a moment ago are not in the informer's cache yet. */
  podsNotCached: 1000,
  /** A cancelled run's Pods are terminating, or their logs are still streaming. */
  cancelling: 1000,
  /** A finished run's logs are still being read: its verdict waits for every record. */
  logsDraining: 500,
  /** The git credentials Secret does not exist yet (Secrets are not watched: look again). */
  secretMissing: 10_000,
  /** The workspace claim's StorageClass does not exist yet (not watched either). */
  storageClassMissing: 10_000,
  /** Kueue or the LocalQueue spec.queueName names is missing (neither is watched). */
  localQueueMissing: 10_000,
  /** The snapshot a run starts from is missing, not ready or not restorable (none is watched). */
  snapshotWaiting: 5_000,
  /** Kueue holds an attempt: its words on why are read again this often. */
  queued: 15_000,
  /** Events of records already read are still being written (the apiserver was away). */
  eventsPending: 1000,
} as const;

/** A worker waits this long for a run's Event writes, then requeues the run. */
export const DEFAULT_EVENTS_WAIT_MS = 2000;
