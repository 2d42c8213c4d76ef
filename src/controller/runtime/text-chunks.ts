import type { Readable } from 'node:stream';

export interface HttpResponse {
  status: number;
  /** The body as text, chunk by chunk: to be read to its end by the caller. */
  chunks: AsyncIterableIterator<string>;
}

/** Text held unread before the body is paused (and let go again below half of it). */
const BODY_HIGH_WATER_CHARS = 1 << 20;

/**
 * The body as text chunks, read from the moment the response is there: an HTTP/2 stream
 * whose last DATA frame arrives before anything reads it was destroyed by Node with its
 * data unread, and a reader made later failed with ERR_STREAM_PREMATURE_CLOSE (1–2 % of
 * 1000 concurrent creates). Flowing at once, paused while the caller falls behind.
 */
export function textChunks(body: Readable): AsyncIterableIterator<string> {
  body.setEncoding('utf8');
  const queue: string[] = [];
  let held = 0;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  body.on('data', (chunk: string) => {
    queue.push(chunk);
    held += chunk.length;
    if (held > BODY_HIGH_WATER_CHARS) body.pause();
    notify();
  });
  body.once('end', () => {
    ended = true;
    notify();
  });
  body.once('error', (error) => {
    failure = error;
    notify();
  });
  body.once('close', () => {
    if (!ended) failure ??= new BodyCut();
    notify();
  });
  return (async function* read() {
    try {
      yield* drain();
    } finally {
      // A caller that stops early (its line handler threw) lets the stream go.
      if (!ended) body.destroy();
    }
  })();

  async function* drain() {
    for (;;) {
      const chunk = queue.shift();
      if (chunk !== undefined) {
        held -= chunk.length;
        if (body.isPaused() && held < BODY_HIGH_WATER_CHARS / 2) body.resume();
        yield chunk;
      } else if (failure) {
        throw failure;
      } else if (ended) {
        return;
      } else {
        await new Promise<void>((resolve) => (wake = resolve));
      }
    }
  }
}

/** The connection closed before the whole body came. */
export class BodyCut extends Error {
  constructor() {
    super('the response body ended before it was complete');
    this.name = 'BodyCut';
  }
}
