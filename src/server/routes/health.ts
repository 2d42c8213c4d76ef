import type http from 'node:http';
import { ApiError } from '../errors.js';
import { HEADERS, send, sendText } from '../reply.js';
import type { ViewContext } from './context.js';

/** What is not the API: the probes, the metrics and the web view's own files. */

/** Answers /healthz, /readyz and /metrics; false if the path is none of them. */
export async function probe(
  ctx: ViewContext,
  pathname: string,
  response: http.ServerResponse,
): Promise<boolean> {
  if (pathname === '/healthz') {
    sendText(response, 200, 'ok\n');
    return true;
  }
  if (pathname === '/readyz') {
    if (ctx.cache.hasSynced()) sendText(response, 200, 'ok\n');
    else sendText(response, 503, 'caches not synced\n');
    return true;
  }
  if (pathname === '/metrics') {
    send(response, 200, await ctx.registry.metrics(), ctx.registry.contentType);
    return true;
  }
  return false;
}

export async function staticFile(
  ctx: ViewContext,
  url: URL,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  if (request.method !== 'GET' && request.method !== 'HEAD')
    throw new ApiError('method_not_allowed', `${request.method} is not served here`);
  const file = await ctx.serveStatic(url.pathname);
  response.writeHead(file.status, {
    ...HEADERS,
    ...file.headers,
    'Content-Length': String(file.body.length),
  });
  response.end(request.method === 'HEAD' ? undefined : file.body);
}
