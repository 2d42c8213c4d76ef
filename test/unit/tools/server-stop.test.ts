import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { startToolsServer, type ToolsGateway } from '../../../src/tools/index.js';

/** A gateway that answers each call after `delayMs` (never, for Infinity). */
function slowGateway(delayMs: number): ToolsGateway & { closed: boolean } {
  const gateway = {
    closed: false,
    async handle(_req: http.IncomingMessage, res: http.ServerResponse) {
      if (delayMs === Infinity) return;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('done');
    },
    revoke: () => undefined,
    endWaits: () => undefined,
    async close() {
      gateway.closed = true;
    },
  };
  return gateway;
}

/** One call on a keep-alive connection: its status, or the error that ended it. */
function call(port: number, agent: http.Agent): Promise<number | string> {
  return new Promise((resolve) => {
    const request = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: '/mcp', agent },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    request.end('{}');
  });
}

describe('the tools server on stop', () => {
  it.each([
    {
      name: 'a call that finishes within the grace gets its answer',
      delayMs: 300,
      graceMs: 5_000,
      outcome: 200,
      stopsWithinMs: 3_000,
    },
    {
      name: 'a call that never answers is cut at the grace',
      delayMs: Infinity,
      graceMs: 200,
      outcome: 'ECONNRESET',
      stopsWithinMs: 2_000,
    },
  ])('$name, and the listener closes', async ({ delayMs, graceMs, outcome, stopsWithinMs }) => {
    const gateway = slowGateway(delayMs);
    const server = await startToolsServer({ bindAddress: '127.0.0.1:0', gateway });
    const agent = new http.Agent({ keepAlive: true });
    try {
      const answer = call(server.port, agent);
      while (server.inFlight() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const started = Date.now();
      await server.stop(graceMs);
      expect(Date.now() - started).toBeLessThan(stopsWithinMs);
      expect(await answer).toBe(outcome);
      expect(gateway.closed).toBe(true);
      // Closed: a new call is refused.
      expect(await call(server.port, new http.Agent())).toBe('ECONNREFUSED');
    } finally {
      agent.destroy();
    }
  });
});
