import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openSse, type SseStream } from '../../../src/server/sse.js';

// A /watch client that stops reading is dropped once its backlog passes the bound, instead of
// the server holding every change for it; a client that reads gets every frame.
describe('SSE streams', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  async function serve(): Promise<{ port: number; stream: Promise<SseStream> }> {
    let resolveStream: (stream: SseStream) => void = () => {};
    const stream = new Promise<SseStream>((resolve) => (resolveStream = resolve));
    server = http.createServer((request, response) =>
      resolveStream(openSse(request, response, { 'X-Test': '1' }, 64 * 1024)),
    );
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { port: (server.address() as AddressInfo).port, stream };
  }

  it('drops a client that does not read, with its backlog bounded', async () => {
    const { port, stream } = await serve();
    const socket = net.connect(port, '127.0.0.1');
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const sse = await stream;
    // The client reads nothing from here on.
    socket.pause();
    const frame = { text: 'x'.repeat(4096) };
    let sent = 0;
    while (sse.open && sent < 100_000) {
      sse.send('run', frame);
      sent += 1;
      if (sent % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(sse.open).toBe(false);
    // Dropped after kernel buffers and the 64 KiB bound filled: far fewer than 100 000 sent.
    expect(sent).toBeLessThan(20_000);
    socket.destroy();
  });

  it('hands a reading client every frame, as event/data pairs', async () => {
    const { port, stream } = await serve();
    const response = fetch(`http://127.0.0.1:${port}/`);
    const sse = await stream;
    for (let i = 0; i < 100; i += 1) sse.send('run', { i, title: '<script>' });
    sse.end();
    const res = await response;
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-test')).toBe('1');
    const text = await res.text();
    const frames = text.split('\n\n').filter(Boolean);
    expect(frames).toHaveLength(100);
    expect(frames[7]).toBe('event: run\ndata: {"i":7,"title":"<script>"}');
  });
});
