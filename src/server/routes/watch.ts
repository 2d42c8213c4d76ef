import { namespaceParam, paramsOf } from '../query.js';
import { HEADERS } from '../reply.js';
import { openSse, sseFrame, type SseStream } from '../sse.js';
import type { ChangeEvent } from '../view-api.js';
import { requireSynced, type Call, type ViewContext } from './context.js';

/** /watch: every change of the cache the caller may see, as Server-Sent Events. */

/** How long a /watch client's review of a namespace is reused (as the authorizer's cache). */
const DECISION_MS = 10_000;
/** Changes one client may have waiting on reviews before it is dropped. */
const MAX_WAITING = 10_000;

type Change = Exclude<ChangeEvent, { event: 'heartbeat' }>;
/** One SSE frame per change, shared by every client it goes to. */
const frames = new WeakMap<Change, string>();
function frameOf(change: Change): string {
  let frame = frames.get(change);
  if (frame === undefined) {
    frame = sseFrame(change.event, change.data);
    frames.set(change, frame);
  }
  return frame;
}

const keyOf = (change: Change) =>
  `${change.event.startsWith('workflow') ? 'w' : 'r'}/${change.data.namespace}`;

/**
 * One client's listener. Its decisions per namespace are kept for a few seconds, so a change is
 * sent synchronously (one frame, serialized once for every client); only a namespace not
 * decided yet waits on a review, in order, on one chain per client.
 */
function listenerOf(ctx: ViewContext, { who, response }: Call, sse: SseStream) {
  const decided = new Map<string, { allowed: boolean; until: number }>();
  let chain: Promise<void> = Promise.resolve();
  let waiting = 0;
  const review = async (change: Change): Promise<boolean> => {
    const ns = change.data.namespace;
    const allowed = change.event.startsWith('workflow')
      ? await who.mayReadWorkflows(ns)
      : await who.mayReadRuns(ns);
    decided.set(keyOf(change), { allowed, until: Date.now() + DECISION_MS });
    return allowed;
  };
  const deliver = (change: Change) => {
    if (!sse.sendFrame(frameOf(change))) ctx.metrics.dropped.inc();
  };
  return (change: Change): void => {
    const known = decided.get(keyOf(change));
    if (known && known.until > Date.now() && waiting === 0) {
      if (known.allowed) deliver(change);
      return;
    }
    if (waiting > MAX_WAITING) {
      ctx.metrics.dropped.inc();
      response.destroy();
      return;
    }
    waiting += 1;
    chain = chain
      .then(async () => {
        if (sse.open && (await review(change))) deliver(change);
      })
      .catch(() => undefined)
      .finally(() => {
        waiting -= 1;
      });
  };
}

export async function watch(ctx: ViewContext, call: Call): Promise<void> {
  requireSynced(ctx);
  const namespace = namespaceParam(paramsOf(call.url, ['namespace']));
  const sse = openSse(call.request, call.response, HEADERS);
  ctx.metrics.sseClients.inc({ stream: 'watch' });
  const listener = listenerOf(ctx, call, sse);
  const stop = ctx.cache.subscribe((change) => {
    if (namespace && change.data.namespace !== namespace) return;
    listener(change);
  });
  const heartbeat = () => sse.send('heartbeat', { at: new Date().toISOString() });
  const beat = setInterval(heartbeat, ctx.heartbeatMs);
  heartbeat();
  sse.onClose(() => {
    stop();
    clearInterval(beat);
    ctx.metrics.sseClients.dec({ stream: 'watch' });
  });
}
