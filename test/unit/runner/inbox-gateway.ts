import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local stand-in for the agent-tools gateway's inbox endpoints (INBOX_PATHS). */

export interface GatewayCall {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
  authorization: string | undefined;
}

export type GatewayReply = { status: number; body?: unknown; raw?: string };
export type GatewayHandler = (
  call: GatewayCall,
  index: number,
) => GatewayReply | Promise<GatewayReply>;

export interface FakeGateway {
  /** The tools URL, as the runner's flag gives it (`…/mcp`). */
  url: string;
  port: number;
  calls: GatewayCall[];
  close(): Promise<void>;
}

export async function fakeGateway(handler: GatewayHandler, port = 0): Promise<FakeGateway> {
  const calls: GatewayCall[] = [];
  const server: Server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://gateway');
      const call: GatewayCall = {
        method: request.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
        authorization: request.headers.authorization,
      };
      calls.push(call);
      void Promise.resolve(handler(call, calls.length - 1)).then((reply) => {
        if (response.destroyed) return;
        response.writeHead(reply.status, { 'Content-Type': 'application/json' });
        response.end(reply.raw ?? (reply.body === undefined ? '' : JSON.stringify(reply.body)));
      });
    });
  });
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    calls,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** A port nothing listens on (yet). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((done) => probe.close(() => done()));
  return port;
}

export const delay = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));
