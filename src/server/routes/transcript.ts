import type http from 'node:http';
import { ApiError } from '../errors.js';
import { paramsOf, uidOf } from '../query.js';
import { HEADERS, VIEW_CODES, failureOf, sendText } from '../reply.js';
import { attemptOfPodLabels, podsOfRun, type AttemptRef } from '../run-logs.js';
import {
  findRun,
  hookOutput,
  readAttempt,
  type DetailDeps,
  type RunTarget,
} from '../run-detail.js';
import { openSse, type SseStream } from '../sse.js';
import { createTranscriptBuilder } from '../transcript.js';
import type { TranscriptEntry } from '../view-api.js';
import { delay, depsOf, requireRun, type ObjectCall, type ViewContext } from './context.js';

/** A run's transcript as Server-Sent Events (followed while it runs), and one hook's output. */

/** A transcript waits for its reader past this many buffered bytes (a finite log). */
const BACKPRESSURE_BYTES = 256 * 1024;

interface TranscriptParams {
  uid: string | undefined;
  slot: number | undefined;
  attempt: number | undefined;
  follow: boolean;
}

function transcriptParams(url: URL): TranscriptParams {
  const params = paramsOf(url, ['uid', 'slot', 'attempt', 'follow']);
  const slot = params.has('slot') ? Number(params.get('slot')) : undefined;
  const attempt = params.has('attempt') ? Number(params.get('attempt')) : undefined;
  for (const [key, value] of [
    ['slot', slot],
    ['attempt', attempt],
  ] as const)
    if (value !== undefined && !(Number.isInteger(value) && value >= 0))
      throw new ApiError('invalid_parameter', `query parameter ${key}: want an integer`, key);
  return { uid: uidOf(params), slot, attempt, follow: params.get('follow') === 'true' };
}

/** One open transcript stream: what it sends to, and which attempts it has sent. */
interface Stream {
  ctx: ViewContext;
  deps: DetailDeps;
  namespace: string;
  name: string;
  sse: SseStream;
  response: http.ServerResponse;
  signal: AbortSignal;
  params: TranscriptParams;
  counter: { next: number };
  sent: Set<string>;
}

const keyOf = (ref: AttemptRef) => `${ref.slot}/${ref.attempt}`;

const wanted = ({ params }: Stream, ref: { slot: number; attempt: number }) =>
  (params.slot === undefined || ref.slot === params.slot) &&
  (params.attempt === undefined || ref.attempt === params.attempt);

async function emit(stream: Stream, entries: TranscriptEntry[]): Promise<void> {
  for (const entry of entries) stream.sse.send('entry', entry);
  // Backpressure: a transcript waits for its reader (a finite log), unlike /watch.
  if (stream.response.writableLength > BACKPRESSURE_BYTES) await stream.sse.drained();
}

/** Sends every wanted attempt of `target` not sent yet, each as one builder's entries. */
async function sendAttempts(stream: Stream, target: RunTarget): Promise<void> {
  const { follow } = stream.params;
  for (const ref of target.attempts.filter((each) => wanted(stream, each))) {
    if (stream.sent.has(keyOf(ref)) || !stream.sse.open) continue;
    const builder = createTranscriptBuilder({
      slot: ref.slot,
      attempt: ref.attempt,
      counter: stream.counter,
    });
    const live = ref.pod && (ref.pod.phase === 'Running' || ref.pod.phase === 'Pending');
    if (follow && live && ref.pod?.phase === 'Pending') {
      // The agent container is not up yet: its log cannot be followed; look again.
      await delay(1000, stream.signal);
      return;
    }
    await readAttempt(
      stream.deps,
      target,
      ref,
      {
        line: (text) => emit(stream, builder.push(text)),
        elided: (bytes) => emit(stream, [builder.elided(bytes)]),
      },
      { follow: follow && Boolean(live), signal: stream.signal },
    );
    stream.sent.add(keyOf(ref));
  }
}

/** The run as it is now, with the attempts not sent yet; undefined once nothing more comes. */
async function refreshed(stream: Stream, target: RunTarget): Promise<RunTarget | undefined> {
  const { namespace, name } = stream;
  const current = stream.ctx.cache.run(namespace, name);
  if (!current || current.summary.uid !== target.summary.uid) return undefined;
  const finished = current.summary.phase === 'Succeeded' || current.summary.phase === 'Failed';
  const pods = await podsOfRun(stream.ctx.client, namespace, current.summary);
  const fresh = pods.map(attemptOfPodLabels).filter((ref) => !stream.sent.has(keyOf(ref)));
  if (finished && fresh.every((ref) => !wanted(stream, ref))) return undefined;
  if (fresh.length === 0) await delay(1000, stream.signal);
  return {
    ...target,
    summary: current.summary,
    attempts: [...target.attempts.filter((ref) => stream.sent.has(keyOf(ref))), ...fresh],
  };
}

async function sendTranscript(stream: Stream, first: RunTarget): Promise<void> {
  let target: RunTarget | undefined = first;
  while (target) {
    await sendAttempts(stream, target);
    if (!stream.params.follow || !stream.sse.open) break;
    target = await refreshed(stream, target);
  }
}

export async function transcript(ctx: ViewContext, call: ObjectCall): Promise<void> {
  const { who, namespace, name, request, response } = call;
  const params = transcriptParams(call.url);
  await requireRun(who, namespace);
  const deps = depsOf(ctx, who);
  const { target } = await findRun(deps, namespace, name, params.uid);
  const sse = openSse(request, response, HEADERS);
  ctx.metrics.sseClients.inc({ stream: 'transcript' });
  const abort = new AbortController();
  sse.onClose(() => {
    abort.abort();
    ctx.metrics.sseClients.dec({ stream: 'transcript' });
  });
  const stream: Stream = {
    ctx,
    deps,
    namespace,
    name,
    sse,
    response,
    signal: abort.signal,
    params,
    counter: { next: 0 },
    sent: new Set(),
  };
  try {
    await sendTranscript(stream, target);
    if (sse.open) {
      sse.send('end', {});
      sse.end();
    }
  } catch (error) {
    const failure = failureOf(error);
    if (failure.code === 'internal') ctx.logger?.error({ err: error }, 'transcript failed');
    sse.send('error', { code: VIEW_CODES[failure.code], message: failure.message });
    sse.end();
  }
}

function hookParams(url: URL, seqText: string) {
  const params = paramsOf(url, ['uid', 'slot', 'attempt']);
  const uid = uidOf(params);
  const seq = /^\d{1,6}$/.test(seqText) ? Number(seqText) : NaN;
  if (Number.isNaN(seq))
    throw new ApiError('invalid_parameter', 'path: the hook seq is not a number', 'seq');
  const number = (key: string) => {
    const value = params.get(key);
    if (value === undefined) return undefined;
    if (!/^\d{1,7}$/.test(value))
      throw new ApiError('invalid_parameter', `query parameter ${key}: want an integer`, key);
    return Number(value);
  };
  return { uid, seq, slot: number('slot'), attempt: number('attempt') };
}

export async function hooks(ctx: ViewContext, call: ObjectCall, seqText: string): Promise<void> {
  const { uid, seq, slot, attempt } = hookParams(call.url, seqText);
  await requireRun(call.who, call.namespace);
  const deps = depsOf(ctx, call.who);
  const { target } = await findRun(deps, call.namespace, call.name, uid);
  sendText(call.response, 200, await hookOutput(deps, target, seq, slot, attempt));
}
