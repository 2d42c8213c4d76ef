// The API client's transport: HTTP/2 over one connection where the server offers h2 (as
// kube-apiserver does), HTTP/1.1 where it does not, and a dead connection found by a ping.
import { execFile } from 'node:child_process';
import http2 from 'node:http2';
import https from 'node:https';
import net from 'node:net';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeClient } from '../../../../src/controller/runtime/client.js';
import { PING_TIMEOUT_MS } from '../../../../src/controller/runtime/http2-pool.js';

const run = promisify(execFile);
let dir: string;
let tls: { key: string; cert: string };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lorenz-h2-'));
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  // prettier-ignore
  await run('/usr/bin/openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=lorenz-test',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert,
  ]);
  tls = { key: await readFile(key, 'utf8'), cert: await readFile(cert, 'utf8') };
});
afterAll(() => rm(dir, { recursive: true, force: true }));

function kubeConfigFor(port: number): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      {
        name: 'c',
        server: `https://127.0.0.1:${port}`,
        caData: Buffer.from(tls.cert).toString('base64'),
      },
    ],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return config;
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
}

/** An answer the size of a small object, naming what was asked. */
const answer = (method: string, path: string, body: string) =>
  JSON.stringify({ method, path, body, padding: 'x'.repeat(2000) });

describe('the API client over HTTP/2', () => {
  it('multiplexes 500 requests at once over one connection, every body whole', async () => {
    let sessions = 0;
    const seen = new Set<string>();
    const server = http2.createSecureServer({ ...tls, allowHTTP1: true });
    server.on('session', () => (sessions += 1));
    server.on('stream', (stream, headers) => {
      seen.add(`${headers[':scheme']} ${headers.authorization} ${headers['content-type']}`);
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (body += chunk));
      stream.on('end', () => {
        stream.respond({ ':status': 201, 'content-type': 'application/json' });
        stream.end(answer(String(headers[':method']), String(headers[':path']), body));
      });
    });
    const port = await listen(server);
    const client = createKubeClient(kubeConfigFor(port));
    try {
      const answers = await Promise.all(
        Array.from({ length: 500 }, (_, index) =>
          client.request<{ method: string; path: string; body: string; padding: string }>({
            method: 'POST',
            path: '/api/v1/namespaces/default/configmaps',
            query: { index },
            body: { index },
          }),
        ),
      );
      expect(answers.map((each) => each.path)).toEqual(
        Array.from(
          { length: 500 },
          (_, index) => `/api/v1/namespaces/default/configmaps?index=${index}`,
        ),
      );
      expect(answers.every((each) => each.padding.length === 2000 && each.method === 'POST')).toBe(
        true,
      );
      expect(answers[7]?.body).toBe('{"index":7}');
      expect(sessions).toBe(1);
      expect([...seen]).toEqual(['https Bearer secret-token application/json']);
    } finally {
      client.close();
      server.close();
    }
  });

  it('streams lines from a long response, and stops reading when the line handler throws', async () => {
    let cancelled = false;
    const server = http2.createSecureServer(tls);
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.write('{"a":1}\n{"a"');
      stream.write(':2}\n');
      // Never ends: a watch. Its close is what the server sees of the client letting go.
      stream.on('close', () => (cancelled = true));
    });
    const port = await listen(server);
    const client = createKubeClient(kubeConfigFor(port));
    try {
      const lines: string[] = [];
      await expect(
        client.stream({
          path: '/watch',
          onLine: (line) => {
            lines.push(line);
            if (lines.length === 2) throw new Error('enough');
          },
        }),
      ).rejects.toThrow('enough');
      expect(lines).toEqual(['{"a":1}', '{"a":2}']);
      await expect.poll(() => cancelled).toBe(true);
    } finally {
      client.close();
      server.close();
    }
  });

  it('keeps to HTTP/1.1 with a server that does not offer h2', async () => {
    const versions = new Set<string>();
    const server = https.createServer(tls, (request, response) => {
      versions.add(request.httpVersion);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(answer(request.method ?? '', request.url ?? '', ''));
    });
    const port = await listen(server);
    const client = createKubeClient(kubeConfigFor(port));
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => client.request<{ path: string }>({ path: '/version' })),
      );
      expect(answers.every((each) => each.path === '/version')).toBe(true);
      expect([...versions]).toEqual(['1.1']);
    } finally {
      client.close();
      server.close();
    }
  });

  it(
    'pings the connection of a request given up on, and replaces one that does not answer',
    { timeout: PING_TIMEOUT_MS + 15_000 },
    async () => {
      let sessions = 0;
      const server = http2.createSecureServer(tls);
      server.on('session', () => (sessions += 1));
      server.on('stream', (stream) => {
        stream.respond({ ':status': 200 });
        stream.end('{"ok":true}');
      });
      const target = await listen(server);
      // A relay whose open connections can be frozen: nothing passes, nothing breaks (a
      // half-open connection); new connections pass.
      const pairs: [net.Socket, net.Socket][] = [];
      const relay = net.createServer((inbound) => {
        const outbound = net.connect(target, '127.0.0.1');
        inbound.pipe(outbound).pipe(inbound);
        inbound.on('error', () => outbound.destroy());
        outbound.on('error', () => inbound.destroy());
        pairs.push([inbound, outbound]);
      });
      const port = await listen(relay);
      const client = createKubeClient(kubeConfigFor(port));
      try {
        expect(await client.request({ path: '/first' })).toEqual({ ok: true });
        for (const [inbound, outbound] of pairs) {
          inbound.unpipe(outbound);
          outbound.unpipe(inbound);
        }
        await expect(
          client.request({ path: '/frozen', signal: AbortSignal.timeout(200) }),
        ).rejects.toThrow();
        const started = Date.now();
        await expect
          .poll(() => client.request({ path: '/after', signal: AbortSignal.timeout(500) }), {
            timeout: PING_TIMEOUT_MS + 5000,
            interval: 200,
          })
          .toEqual({ ok: true });
        expect(Date.now() - started).toBeGreaterThanOrEqual(PING_TIMEOUT_MS - 1000);
        expect(sessions).toBe(2);
        expect(pairs).toHaveLength(2);
      } finally {
        client.close();
        for (const [inbound, outbound] of pairs) {
          inbound.destroy();
          outbound.destroy();
        }
        relay.close();
        server.close();
      }
    },
  );
});
