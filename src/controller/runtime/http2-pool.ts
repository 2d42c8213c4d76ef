import http2 from 'node:http2';
import type https from 'node:https';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { textChunks, type HttpResponse } from './text-chunks.js';
import { tlsMaterial } from './tls-material.js';

/**
 * HTTP/2 to the apiserver, as client-go speaks it: requests and watches multiplexed over one
 * TLS connection instead of a socket (and, in a burst, a TLS handshake) per request in
 * flight. The protocol is chosen by ALPN on the first connection; a server that does not
 * offer h2 is answered with `undefined`, and the caller keeps to HTTP/1.1.
 */

/** What one request needs: the path with its query, and headers (names in any case). */
export interface Http2Request {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface Http2Pool {
  /** Undefined: the server does not speak HTTP/2 (ALPN), use HTTP/1.1 for it. */
  request(request: Http2Request): Promise<HttpResponse | undefined>;
  /** Ends every connection at once (streams in flight fail). */
  close(): void;
}

/** A connection that answers no ping within this long is given up, its streams failed. */
export const PING_TIMEOUT_MS = 5000;
/** A connection with streams open is pinged this often (client-go's ReadIdleTimeout). */
export const PING_INTERVAL_MS = 30_000;
/** The TLS handshake of a new connection (client-go's TLSHandshakeTimeout). */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * Flow-control windows: Node's 64 KiB default makes a list page of megabytes trickle in
 * window updates; Go's transport opens 4 MiB per stream and 1 GiB per connection.
 */
const STREAM_WINDOW_BYTES = 4 * 2 ** 20;
const CONNECTION_WINDOW_BYTES = 2 ** 30;
/**
 * Streams one connection carries when the server has not said (kube-apiserver allows 1000):
 * past the server's limit a new connection is opened, as Go's transport does, so that
 * long-lived streams (watches, followed logs) never queue requests behind them.
 */
const DEFAULT_STREAM_LIMIT = 100;

/** Headers HTTP/2 forbids (RFC 9113 §8.2.2), dropped if a caller passes one. */
const CONNECTION_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** One connection and what the pool knows of it. */
interface Connection {
  session: http2.ClientHttp2Session;
  open: number;
  /** False after GOAWAY, an error or a failed ping: no new streams on it. */
  usable: boolean;
  pinging: boolean;
  pinger: NodeJS.Timeout;
}

/** The connection failed its health check: its streams fail with this, and are retried by their callers. */
export class ConnectionUnhealthy extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectionUnhealthy';
  }
}

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createHttp2Pool(
  server: URL,
  tlsOptions: () => Promise<https.RequestOptions>,
): Http2Pool {
  const connections = new Set<Connection>();
  /** The connection being made, shared by the requests that wait for it. */
  let connecting: Promise<Connection | undefined> | undefined;
  /** ALPN said no once: this server is spoken to over HTTP/1.1 from then on. */
  let http1Only = false;
  const port = Number(server.port || 443);
  const host = server.hostname.replace(/^\[(.*)\]$/, '$1');

  function ping(connection: Connection): void {
    if (connection.pinging || connection.session.destroyed) return;
    connection.pinging = true;
    const timer = setTimeout(() => {
      fail(
        connection,
        new ConnectionUnhealthy(
          `the apiserver's connection answered no ping within ${PING_TIMEOUT_MS} ms`,
        ),
      );
    }, PING_TIMEOUT_MS);
    timer.unref();
    const answered = (error: Error | null) => {
      clearTimeout(timer);
      connection.pinging = false;
      if (error) fail(connection, error);
    };
    try {
      // False: too many pings unanswered already; one of those decides.
      if (!connection.session.ping(answered)) answered(null);
    } catch (error) {
      // A session still connecting or already closing: there is nothing to ask.
      clearTimeout(timer);
      connection.pinging = false;
      if (!(error instanceof Error)) throw error;
    }
  }

  function fail(connection: Connection, error: Error): void {
    connection.usable = false;
    connections.delete(connection);
    clearInterval(connection.pinger);
    if (!connection.session.destroyed) connection.session.destroy(error);
  }

  async function handshake(): Promise<tls.TLSSocket | undefined> {
    const options = await tlsOptions();
    const socket = tls.connect({
      host,
      port,
      // A name for SNI only, never an address (RFC 6066); the certificate is checked either way.
      ...(options.servername
        ? { servername: options.servername }
        : isIP(host) === 0
          ? { servername: host }
          : {}),
      ...tlsMaterial(options),
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    return await new Promise<tls.TLSSocket | undefined>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(
          new ConnectionUnhealthy(
            `TLS handshake with ${server.host} took over ${HANDSHAKE_TIMEOUT_MS} ms`,
          ),
        );
      }, HANDSHAKE_TIMEOUT_MS);
      socket.once('error', (error: Error) => {
        clearTimeout(timer);
        reject(error);
      });
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        if (socket.alpnProtocol === 'h2') return resolve(socket);
        socket.destroy();
        resolve(undefined);
      });
    });
  }

  async function connect(): Promise<Connection | undefined> {
    const socket = await handshake();
    if (!socket) {
      http1Only = true;
      return undefined;
    }
    const session = http2.connect(server.origin, {
      createConnection: () => socket,
      settings: { initialWindowSize: STREAM_WINDOW_BYTES, enablePush: false },
    });
    session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
    const connection: Connection = {
      session,
      open: 0,
      usable: true,
      pinging: false,
      pinger: setInterval(() => {
        if (connection.open > 0) ping(connection);
      }, PING_INTERVAL_MS),
    };
    connection.pinger.unref();
    // No stream open: the connection must not keep the process alive (as an idle HTTP/1.1
    // keep-alive socket does not).
    session.unref();
    const retire = () => {
      connection.usable = false;
      connections.delete(connection);
      clearInterval(connection.pinger);
    };
    session.on('goaway', retire);
    session.on('close', retire);
    // Each stream fails with the session's error; nothing else is to be done with it here.
    session.on('error', retire);
    connections.add(connection);
    return connection;
  }

  const limitOf = (connection: Connection) =>
    connection.session.remoteSettings.maxConcurrentStreams ?? DEFAULT_STREAM_LIMIT;

  async function connectionFor(signal: AbortSignal | undefined): Promise<Connection | undefined> {
    for (const connection of connections) {
      if (
        connection.usable &&
        !connection.session.destroyed &&
        connection.open < limitOf(connection)
      )
        return connection;
    }
    connecting ??= connect().finally(() => (connecting = undefined));
    const made = connecting;
    if (!signal) return made;
    signal.throwIfAborted();
    return await new Promise<Connection | undefined>((resolve, reject) => {
      const abort = () => reject(signal.reason as Error);
      signal.addEventListener('abort', abort, { once: true });
      made.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
    });
  }

  function send(connection: Connection, request: Http2Request): Promise<HttpResponse> {
    const headers: http2.OutgoingHttpHeaders = {
      ':method': request.method,
      ':path': request.path,
    };
    // for-in, not Object.entries(): no array per header of every request.
    for (const name in request.headers) {
      const lower = name.toLowerCase();
      if (!CONNECTION_HEADERS.has(lower)) headers[lower] = request.headers[name];
    }
    const stream = connection.session.request(headers, {
      endStream: request.body === undefined,
      ...(request.signal ? { signal: request.signal } : {}),
    });
    connection.open += 1;
    connection.session.ref();
    stream.once('close', () => {
      connection.open -= 1;
      if (connection.open === 0 && !connection.session.destroyed) connection.session.unref();
    });
    // A stream its caller gave up on may be a sign of a dead connection (a watch that went
    // silent, a request that timed out): ask the connection at once rather than at the next interval.
    request.signal?.addEventListener('abort', () => ping(connection), { once: true });
    if (request.body !== undefined) stream.end(request.body);
    // Errors after the response reach whoever reads the body; one in between must not be an
    // unhandled 'error' event.
    stream.on('error', () => undefined);
    return new Promise<HttpResponse>((resolve, reject) => {
      stream.once('error', reject);
      stream.once('response', (responseHeaders) => {
        stream.off('error', reject);
        resolve({ status: Number(responseHeaders[':status'] ?? 0), chunks: textChunks(stream) });
      });
    });
  }

  return {
    async request(request) {
      if (http1Only) return undefined;
      const connection = await connectionFor(request.signal);
      if (!connection) return undefined;
      return send(connection, request);
    },
    close() {
      for (const connection of [...connections])
        fail(connection, new Error('the client was closed'));
    },
  };
}
