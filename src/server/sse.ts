import type http from 'node:http';

/**
 * One Server-Sent Events stream. A client that does not read is dropped once this much is
 * waiting for it, never buffered without bound: its EventSource reconnects and starts over
 * from a fresh list.
 */
export const SSE_MAX_BUFFERED_BYTES = 1 << 20;

export interface SseStream {
  /** False once the client is gone (or was dropped): stop producing. */
  readonly open: boolean;
  send(event: string, data: unknown): boolean;
  /** Resolves when the client has taken what was sent (for producers that can wait). */
  drained(): Promise<void>;
  end(): void;
  onClose(handler: () => void): void;
}

export function openSse(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  headers: Record<string, string>,
  maxBuffered = SSE_MAX_BUFFERED_BYTES,
): SseStream {
  response.writeHead(200, {
    ...headers,
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
    // nginx and similar proxies: pass events on as they come.
    'X-Accel-Buffering': 'no',
  });
  response.flushHeaders();
  let open = true;
  const handlers: (() => void)[] = [];
  const close = () => {
    if (!open) return;
    open = false;
    for (const handler of handlers) handler();
  };
  request.socket.once('close', close);
  response.once('close', close);
  return {
    get open() {
      return open;
    },
    send(event, data) {
      if (!open) return false;
      if (response.writableLength > maxBuffered) {
        // Slow client: drop it rather than hold its backlog.
        response.destroy();
        close();
        return false;
      }
      response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      return open;
    },
    drained() {
      if (!open || response.writableLength === 0) return Promise.resolve();
      return new Promise((resolve) => {
        const done = () => {
          response.off('drain', done);
          response.off('close', done);
          resolve();
        };
        response.once('drain', done);
        response.once('close', done);
      });
    },
    end() {
      if (open) response.end();
      close();
    },
    onClose(handler) {
      if (!open) handler();
      else handlers.push(handler);
    },
  };
}
