import type { LogEntry } from '../archive/types.js';
import { PODS, resourcePath, type KubeClient } from '../controller/runtime/client.js';
import type { ArchiveReads } from './archive-source.js';
import { get, records, str, type Json } from './json.js';

/**
 * Where a run attempt's log is read from: the Pod's log while the Pod exists and runs (or
 * when the archive has none of it), else the archive. Lines are handed on one at a time;
 * `elided` marks bytes the archive's cap dropped.
 */

export interface AttemptRef {
  slot: number;
  attempt: number;
  /** The Pod, when it is still in the cluster. */
  pod?: { name: string; uid: string; phase: string };
}

export interface LogSink {
  line(text: string): Promise<void> | void;
  elided(bytes: number): Promise<void> | void;
}

/** Longest log line held: a 1 MB agent message is passed on whole, a runaway line is cut. */
const MAX_LINE = 4 * 1024 * 1024;

/** The run's Pods in the cluster (labelled with its name, owned by its uid), by slot and attempt. */
export async function podsOfRun(
  client: KubeClient,
  namespace: string,
  run: { name: string; uid: string },
): Promise<Json[]> {
  const list = await client.request<{ items?: unknown }>({
    path: resourcePath(PODS, namespace),
    query: { labelSelector: `lorenz.dev/issuerun=${run.name}` },
  });
  return records(list.items).filter((pod) => {
    const owners = records(get(pod, 'metadata', 'ownerReferences'));
    return owners.length === 0 || owners.some((owner) => owner.uid === run.uid);
  });
}

export function attemptOfPodLabels(pod: Json): AttemptRef {
  const labels = get(pod, 'metadata', 'labels');
  return {
    slot: Number(str(get(labels, 'lorenz.dev/slot')) ?? '0') || 0,
    attempt: Number(str(get(labels, 'lorenz.dev/attempt')) ?? '1') || 1,
    pod: {
      name: str(get(pod, 'metadata', 'name')) ?? '',
      uid: str(get(pod, 'metadata', 'uid')) ?? '',
      phase: str(get(pod, 'status', 'phase')) ?? 'Unknown',
    },
  };
}

/** Reads the archived log of one attempt; false when the archive has none of it. */
export async function readArchivedAttempt(
  reads: ArchiveReads,
  run: { uid: string; namespace: string; name: string },
  attempt: AttemptRef,
  sink: LogSink,
  signal?: AbortSignal,
): Promise<boolean> {
  let found = false;
  let pending = '';
  const entries: AsyncIterable<LogEntry> = reads.readLog(run, {
    slot: attempt.slot,
    attempt: attempt.attempt,
  });
  for await (const entry of entries) {
    if (signal?.aborted) break;
    found = true;
    if (entry.kind === 'elided') {
      if (pending) await sink.line(pending);
      pending = '';
      await sink.elided(entry.bytes);
      continue;
    }
    pending += entry.piece.data;
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const text = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (text) await sink.line(text);
      newline = pending.indexOf('\n');
    }
  }
  if (pending) await sink.line(pending);
  return found;
}

/**
 * The Pod's agent log (pods/log, as the server's ServiceAccount reads it: the caller's
 * review was done before); with `follow` until the container's log ends. `skip` lines
 * already handed on (a follow that broke and is read again).
 */
export async function readPodLog(
  client: KubeClient,
  namespace: string,
  pod: string,
  options: { follow: boolean; skip?: number; signal?: AbortSignal; onLine: (line: string) => void },
): Promise<number> {
  let seen = 0;
  await client.stream({
    path: resourcePath(PODS, namespace, pod, 'log'),
    query: { container: 'agent', ...(options.follow ? { follow: true } : {}) },
    maxLineLength: MAX_LINE,
    onLine: (line) => {
      seen += 1;
      if (seen > (options.skip ?? 0)) options.onLine(line);
    },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return seen;
}
