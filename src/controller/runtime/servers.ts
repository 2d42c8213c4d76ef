import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { listening } from '../../tools/listen.js';

export interface BoundServer {
  /** The address actually bound (port 0 picks a free port). */
  address: { host: string; port: number };
  close(): Promise<void>;
}

/**
 * Parses a bind address as controller-runtime takes it: `host:port`, `:port` (all
 * interfaces), or `0` to disable the server.
 */
export function parseBindAddress(address: string): { host: string; port: number } | undefined {
  if (address === '0' || address === '') return undefined;
  const colon = address.lastIndexOf(':');
  if (colon < 0)
    throw new Error(`invalid bind address ${JSON.stringify(address)}: want host:port, :port or 0`);
  const host = address.slice(0, colon).replace(/^\[|\]$/g, '') || '0.0.0.0';
  const port = Number(address.slice(colon + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`invalid port in bind address ${JSON.stringify(address)}`);
  }
  return { host, port };
}

/**
 * Listens on `bind` with `handler`; resolves once bound (a port taken rejects). Closing ends
 * the open connections too, so a stop never waits on a client's keep-alive. The metrics and
 * probe servers and the archive's read API (src/server) share it.
 */
export async function listenHttp(
  bind: { host: string; port: number },
  handler: http.RequestListener,
  timeouts: { headersTimeoutMs?: number } = {},
): Promise<BoundServer> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  if (timeouts.headersTimeoutMs !== undefined) server.headersTimeout = timeouts.headersTimeoutMs;
  await listening(server, bind.port, bind.host);
  const info = server.address() as AddressInfo;
  return {
    address: { host: info.address, port: info.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `/metrics` in the Prometheus text format. */
export function startMetricsServer(
  address: string,
  registry: Registry,
): Promise<BoundServer | undefined> {
  const bind = parseBindAddress(address);
  if (!bind) return Promise.resolve(undefined);
  return listenHttp(bind, (request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      (error: unknown) => response.writeHead(500).end(`${String(error)}\n`),
    );
  });
}

/** A named check; returns an error message when not ok. */
export type Check = () => string | undefined;

/**
 * `/healthz` (the process serves requests) and `/readyz` (every readiness check passes,
 * e.g. the informers have synced), as kubelet probes expect: 200 `ok` or 500 naming the
 * failed checks.
 */
export function startHealthServer(
  address: string,
  checks: { healthz: Map<string, Check>; readyz: Map<string, Check> },
): Promise<BoundServer | undefined> {
  const bind = parseBindAddress(address);
  if (!bind) return Promise.resolve(undefined);
  return listenHttp(bind, (request, response) => {
    const path = request.url?.split('?')[0]?.replace(/\/$/, '');
    const set =
      path === '/healthz' ? checks.healthz : path === '/readyz' ? checks.readyz : undefined;
    if (!set || request.method !== 'GET') {
      response.writeHead(404).end('not found\n');
      return;
    }
    const failures: string[] = [];
    for (const [name, check] of set) {
      const problem = check();
      if (problem !== undefined) failures.push(`[-]${name} failed: ${problem}`);
    }
    if (failures.length === 0)
      response.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
    else response.writeHead(500, { 'Content-Type': 'text/plain' }).end(`${failures.join('\n')}\n`);
  });
}
