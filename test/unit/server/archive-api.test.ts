// The read API's HTTP behaviour that needs no apiserver: backpressure on the log stream, the
// security headers, /healthz without a token. Who may read what is tested against a real
// kube-apiserver in test/integration/archive-readers.test.ts; here a fixed caller stands in.
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ArchiveStore } from '../../../src/archive/types.js';
import type { KubeClient } from '../../../src/controller/runtime/client.js';
import { archiveApiHandler } from '../../../src/server/archive-api.js';
import type { Authorizer } from '../../../src/server/auth.js';
import { delegatingArchive } from '../../../src/archive/delegate.js';
import { openSqliteArchive } from '../../../src/archive/sqlite.js';

const everyone: Authorizer = {
  authenticate: async () => ({ username: 'alice', groups: [] }),
  mayList: async () => true,
};
const noClient = {} as KubeClient;

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(store: ArchiveStore): Promise<number> {
  const handler = archiveApiHandler({ store, client: noClient, authorizer: everyone });
  server = http.createServer((request, response) => void handler(request, response));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

async function storeWithLog(pieces: number, size: number) {
  const store = await openSqliteArchive(':memory:');
  await store.putRun({
    uid: 'u1',
    namespace: 'a',
    name: 'big',
    workflow: 'w',
    issueId: 'i',
    issueIdentifier: 'E-1',
    issueTitle: 't',
    phase: 'Succeeded',
    attempts: 1,
    createdAt: '2026-01-01T00:00:00.000Z',
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
    object: {},
  });
  const line = `${'x'.repeat(size - 1)}\n`;
  for (let index = 0; index < pieces; index += 1)
    await store.appendLog({
      runUid: 'u1',
      podUid: 'p1',
      slot: 0,
      attempt: 1,
      offset: index * size,
      data: line,
      capBytes: pieces * size * 2,
    });
  return store;
}

describe('the archive read API', () => {
  it('reads the log only as fast as the client takes it (backpressure)', async () => {
    const store = await storeWithLog(400, 64 * 1024);
    let yielded = 0;
    const counted: ArchiveStore = {
      ...delegatingArchive(() => store),
      async *readLog(uid, filter) {
        for await (const entry of store.readLog(uid, filter)) {
          yielded += 1;
          yield entry;
        }
      },
    };
    const port = await serve(counted);
    // A client that sends the request and then reads nothing.
    const socket = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.pause();
    socket.write(
      'GET /api/v1/namespaces/a/runs/big/log HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n',
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // 400 entries of 64 KiB = 25 MiB; socket buffers hold a few MiB at most.
    expect(yielded).toBeGreaterThan(0);
    expect(yielded).toBeLessThan(200);
    socket.destroy();
  });

  it('answers JSON with nosniff, and /healthz without a token', async () => {
    const port = await serve(await openSqliteArchive(':memory:'));
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(health.headers.get('x-content-type-options')).toBe('nosniff');
    const missing = await fetch(`http://127.0.0.1:${port}/api/v1/namespaces/a/runs/none`, {
      headers: { Authorization: 'Bearer t' },
    });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await missing.json()).toMatchObject({ code: 'not_found' });
    const posted = await fetch(`http://127.0.0.1:${port}/api/v1/runs`, { method: 'POST' });
    expect(posted.status).toBe(405);
    const malformed = await fetch(`http://127.0.0.1:${port}/api/v1/runs`, {
      headers: { Authorization: 'Basic abc' },
    });
    expect(malformed.status).toBe(401);
  });
});
