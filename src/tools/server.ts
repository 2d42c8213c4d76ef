import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolsGateway } from './gateway.js';
import { listening } from './listen.js';

export interface ToolsServerOptions {
  /** `host:port`, `:port` (all interfaces) or a bare port; port 0 picks a free one. */
  bindAddress: string;
  gateway: ToolsGateway;
}

export interface ToolsServer {
  /** The port actually bound (useful with port 0). */
  port: number;
  /**
   * Stops accepting and closes idle keep-alive connections at once; tool calls in flight get
   * `graceMs` (default 5 s) to finish, then the gateway's requests and every connection are
   * closed. Settles when the listener is closed: it no longer holds the process.
   */
  stop(graceMs?: number): Promise<void>;
  /** Tool calls being served now. */
  inFlight(): number;
}

/** How long stop() lets tool calls in flight finish (an agent's write to its tracker). */
export const TOOLS_STOP_GRACE_MS = 5_000;

/** Splits a bind address; the host is undefined for all interfaces. */
export function parseBindAddress(bindAddress: string): { host: string | undefined; port: number } {
  const at = bindAddress.lastIndexOf(':');
  const rawHost = at < 0 ? '' : bindAddress.slice(0, at);
  const rawPort = at < 0 ? bindAddress : bindAddress.slice(at + 1);
  const port = Number(rawPort);
  if (!/^\d{1,5}$/.test(rawPort) || port > 65_535) {
    throw new RangeError(`not a bind address: ${bindAddress}`);
  }
  // [::1]:8090 names an IPv6 host.
  const host = rawHost.replace(/^\[(.*)\]$/, '$1');
  return { host: host === '' ? undefined : host, port };
}

/** Serves the gateway over plain HTTP: inside the cluster, behind a NetworkPolicy. */
export async function startToolsServer(options: ToolsServerOptions): Promise<ToolsServer> {
  const { host, port } = parseBindAddress(options.bindAddress);
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const server: Server = createServer((req, res) => {
    inFlight += 1;
    res.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) drained?.();
    });
    void options.gateway.handle(req, res);
  });
  // An agent that opens a connection and sends nothing must not hold it forever. Both bound
  // receiving the request only, not the answer, so the inbox's long poll (up to
  // INBOX_LIMITS.maxWaitMs, 30 s, after a small request) is not cut; no socket idle timeout
  // is set (Node's default 0), which would cut it.
  server.requestTimeout = 60_000;
  server.headersTimeout = 15_000;
  server.timeout = 0;
  await listening(server, port, host);
  return {
    port: (server.address() as AddressInfo).port,
    inFlight: () => inFlight,
    async stop(graceMs = TOOLS_STOP_GRACE_MS) {
      const closing = new Promise<void>((resolve) => server.close(() => resolve()));
      // A keep-alive connection between two calls would hold the listener open for good.
      server.closeIdleConnections();
      // A long poll has nothing to finish: it answers "no decision yet" now, not after the grace.
      options.gateway.endWaits();
      if (inFlight > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => (drained = resolve)),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
        ]);
        clearTimeout(timer);
      }
      await options.gateway.close();
      server.closeAllConnections();
      await closing;
    },
  };
}
