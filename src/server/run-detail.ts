import type { KubeClient } from '../controller/runtime/client.js';
import type { ArchiveReads } from './archive-source.js';
import type { ViewCache } from './cache.js';
import { ApiError } from './errors.js';
import { get, isRecord, records, str, type Json } from './json.js';
import {
  attemptOfPod,
  attemptOfRecord,
  conditionsOf,
  eventOfObject,
  eventOfRecord,
  runOfRecord,
} from './mappers.js';
import {
  attemptOfPodLabels,
  podsOfRun,
  readArchivedAttempt,
  readPodLog,
  type AttemptRef,
  type LogSink,
} from './run-logs.js';
import { inboxOfIssueRun } from './inbox-view.js';
import { createTranscriptBuilder } from './transcript.js';
import type { AttemptView, EventView, RunDetail, RunSummary, TimelineBar } from './view-api.js';

/**
 * One run as the run page shows it: from the cluster while it is there (its object in the
 * cache, its Pods and Events from the apiserver, attempts whose Pods are gone from the
 * archive), else from the archive alone.
 */

export interface RunTarget {
  summary: RunSummary;
  /** The live object, when the run is in the cluster. */
  object?: Json;
  attempts: AttemptRef[];
  conditions: Json[];
}

export interface DetailDeps {
  cache: ViewCache;
  client: KubeClient;
  archive: ArchiveReads | undefined;
}

/** The run, its Pods and what the archive knows of it; not_found when neither has it. */
export async function findRun(
  deps: DetailDeps,
  namespace: string,
  name: string,
  uid: string | undefined,
): Promise<{
  target: RunTarget;
  pods: Json[];
  archived?: Awaited<ReturnType<ArchiveReads['getRun']>>;
}> {
  const live = deps.cache.run(namespace, name);
  if (live && (!uid || live.summary.uid === uid)) {
    const pods = await podsOfRun(deps.client, namespace, live.summary);
    const archived = await deps.archive
      ?.getRun({ namespace, name, uid: live.summary.uid })
      .catch(() => undefined);
    const refs = new Map<string, AttemptRef>();
    for (const attempt of archived?.attempts ?? [])
      refs.set(`${attempt.slot}/${attempt.attempt}`, {
        slot: attempt.slot,
        attempt: attempt.attempt,
      });
    for (const pod of pods) {
      const ref = attemptOfPodLabels(pod);
      refs.set(`${ref.slot}/${ref.attempt}`, ref);
    }
    return {
      target: {
        summary: live.summary,
        object: live.object,
        attempts: sortAttempts([...refs.values()]),
        conditions: records(get(live.object, 'status', 'conditions')),
      },
      pods,
      ...(archived ? { archived } : {}),
    };
  }
  const archived = await deps.archive?.getRun({ namespace, name, ...(uid ? { uid } : {}) });
  if (!archived)
    throw new ApiError(
      'not_found',
      `no run ${namespace}/${name}${uid ? ` with uid ${uid}` : ''} in the cluster${deps.archive ? ' nor in the archive' : ' (no archive configured)'}`,
    );
  return {
    target: {
      summary: runOfRecord(archived.run),
      attempts: sortAttempts(
        archived.attempts.map((each) => ({ slot: each.slot, attempt: each.attempt })),
      ),
      conditions: records(get(archived.run.object, 'status', 'conditions')),
    },
    pods: [],
    archived,
  };
}

const sortAttempts = (refs: AttemptRef[]): AttemptRef[] =>
  refs.sort((a, b) => a.slot - b.slot || a.attempt - b.attempt);

/** One attempt's log lines, from the Pod or the archive (see run-logs.ts). */
export async function readAttempt(
  deps: DetailDeps,
  target: RunTarget,
  attempt: AttemptRef,
  sink: LogSink,
  options: { follow: boolean; signal?: AbortSignal } = { follow: false },
): Promise<void> {
  const run = target.summary;
  const running =
    attempt.pod && (attempt.pod.phase === 'Running' || attempt.pod.phase === 'Pending');
  if (!running && deps.archive) {
    const found = await readArchivedAttempt(deps.archive, run, attempt, sink, options.signal);
    if (found || !attempt.pod) return;
  }
  if (!attempt.pod) return;
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failure: unknown;
  // The stream's callback is synchronous; lines wait here for the sink (which may wait on a
  // slow client) — at most what the apiserver sends before TCP pushes back.
  const reading = readPodLog(deps.client, run.namespace, attempt.pod.name, {
    follow: options.follow,
    ...(options.signal ? { signal: options.signal } : {}),
    onLine: (line) => {
      lines.push(line);
      wake?.();
    },
  })
    .catch((error: unknown) => {
      if (!options.signal?.aborted) failure = error;
    })
    .finally(() => {
      done = true;
      wake?.();
    });
  for (;;) {
    while (lines.length > 0) await sink.line(lines.shift() ?? '');
    if (done) break;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  await reading;
  if (failure && !options.follow)
    throw failure instanceof Error ? failure : new Error(JSON.stringify(failure));
}

function attemptBar(view: AttemptView): TimelineBar | undefined {
  if (!view.startedAt) return undefined;
  const status =
    view.phase === 'Succeeded' ? 'succeeded' : view.phase === 'Failed' ? 'failed' : 'running';
  return {
    kind: 'attempt',
    slot: view.slot,
    attempt: view.attempt,
    label: `slot ${view.slot} attempt ${view.attempt}`,
    startedAt: view.startedAt,
    ...(view.finishedAt ? { finishedAt: view.finishedAt } : {}),
    status: view.finishedAt && status === 'running' ? 'succeeded' : status,
  };
}

export async function runDetail(
  deps: DetailDeps,
  namespace: string,
  name: string,
  uid: string | undefined,
): Promise<RunDetail> {
  const { target, pods, archived } = await findRun(deps, namespace, name, uid);
  const byKey = new Map<string, AttemptView>();
  for (const attempt of archived?.attempts ?? [])
    byKey.set(`${attempt.slot}/${attempt.attempt}`, attemptOfRecord(attempt));
  for (const pod of pods) {
    const view = attemptOfPod(pod, target.object ?? {});
    const before = byKey.get(`${view.slot}/${view.attempt}`);
    // The Pod is the truth while it exists; the archive's hooks fill in when status has none.
    byKey.set(
      `${view.slot}/${view.attempt}`,
      before && view.hooks.length === 0 ? { ...view, hooks: before.hooks } : view,
    );
  }
  const attempts = [...byKey.values()].sort((a, b) => a.slot - b.slot || a.attempt - b.attempt);

  let events: EventView[] = (archived?.events ?? []).map(eventOfRecord);
  if (target.object) {
    const uids = [target.summary.uid, ...pods.map((pod) => str(get(pod, 'metadata', 'uid')) ?? '')];
    const lists = await Promise.all(
      uids.filter(Boolean).map((each) =>
        deps.client
          .request<{ items?: unknown }>({
            path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
            query: { fieldSelector: `involvedObject.uid=${each}` },
          })
          .then((list) => records(list.items))
          .catch(() => [] as Json[]),
      ),
    );
    const live = lists.flat().map(eventOfObject);
    const seen = new Set(
      live.map((event) => `${event.involvedName}/${event.reason}/${event.firstTime ?? ''}`),
    );
    events = [
      ...events.filter(
        (event) => !seen.has(`${event.involvedName}/${event.reason}/${event.firstTime ?? ''}`),
      ),
      ...live,
    ];
  }
  events.sort((a, b) => (a.lastTime ?? '').localeCompare(b.lastTime ?? ''));

  const timeline: TimelineBar[] = [];
  for (const view of attempts) {
    const bar = attemptBar(view);
    if (bar) timeline.push(bar);
  }
  for (const ref of target.attempts) {
    const builder = createTranscriptBuilder({ slot: ref.slot, attempt: ref.attempt });
    await readAttempt(deps, target, ref, {
      line: (text) => void builder.push(text),
      elided: () => undefined,
    }).catch(() => undefined);
    timeline.push(...builder.timeline());
  }
  // The inbox of the live object, else of the archived one (its decisions, for the history).
  const object = target.object ?? (isRecord(archived?.run.object) ? archived.run.object : {});
  const inbox = inboxOfIssueRun(object, deps.cache.workflow(namespace, target.summary.workflow));
  return {
    run: target.summary,
    attempts,
    events,
    timeline,
    conditions: conditionsOf(target.conditions),
    ...(inbox ? { inbox } : {}),
  };
}

/** The whole output of hook run `seq` of one attempt (default: slot 0, its last attempt). */
export async function hookOutput(
  deps: DetailDeps,
  target: RunTarget,
  seq: number,
  slot: number | undefined,
  attempt: number | undefined,
): Promise<string> {
  const inSlot = target.attempts.filter((each) => each.slot === (slot ?? 0));
  const ref =
    attempt === undefined ? inSlot.at(-1) : inSlot.find((each) => each.attempt === attempt);
  if (!ref) throw new ApiError('not_found', `run ${target.summary.name} has no such attempt`);
  const builder = createTranscriptBuilder({
    slot: ref.slot,
    attempt: ref.attempt,
    keepHookOutput: true,
  });
  await readAttempt(deps, target, ref, {
    line: (text) => void builder.push(text),
    elided: () => undefined,
  });
  const output = builder.hookOutput(seq);
  if (output === undefined)
    throw new ApiError(
      'not_found',
      `no output of hook run ${seq} in slot ${ref.slot} attempt ${ref.attempt}`,
    );
  return output;
}
