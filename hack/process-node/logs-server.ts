import { open } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { ServingCert } from './certs.js';
import { parseLogLine, renderEntry, type LogEntry } from './log-file.js';
import { logKey, type ContainerLogs, type LogRegistry } from './log-registry.js';
import { describeError, sleep, type LogFn } from './types.js';

export interface LogsServer {
  port: number;
  close(): Promise<void>;
}

interface LogQuery {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  tailLines?: number;
  limitBytes?: number;
  since?: number;
}

const POLL_MS = 200;

function parseQuery(url: URL): LogQuery {
  const flag = (k: string) => url.searchParams.get(k) === 'true' || url.searchParams.get(k) === '1';
  const num = (k: string) => {
    const v = url.searchParams.get(k);
    return v === null || v === '' ? undefined : Number(v);
  };
  const sinceSeconds = num('sinceSeconds');
  const sinceTime = url.searchParams.get('sinceTime');
  return {
    follow: flag('follow'),
    previous: flag('previous'),
    timestamps: flag('timestamps'),
    tailLines: num('tailLines'),
    limitBytes: num('limitBytes'),
    since: sinceTime
      ? Date.parse(sinceTime)
      : sinceSeconds !== undefined
        ? Date.now() - sinceSeconds * 1000
        : undefined,
  };
}

/** Splits a chunk into whole log entries, keeping an unterminated tail for later. */
function takeEntries(text: string): { entries: LogEntry[]; rest: string } {
  const lines = text.split('\n');
  const rest = lines.pop() ?? '';
  const entries = lines.map((l) => parseLogLine(l)).filter((e) => e !== undefined);
  return { entries, rest };
}

function selectInitial(entries: LogEntry[], q: LogQuery): LogEntry[] {
  let out =
    q.since === undefined ? entries : entries.filter((e) => Date.parse(e.time) >= (q.since ?? 0));
  if (q.tailLines !== undefined && q.tailLines >= 0) {
    // Count whole lines from the end; P fragments belong to the line that follows them.
    let lines = 0;
    let start = out.length;
    while (start > 0) {
      const entry = out[start - 1];
      if (entry && !entry.partial) {
        if (lines === q.tailLines) break;
        lines += 1;
      }
      start -= 1;
    }
    out = out.slice(start);
  }
  return out;
}

async function streamLogs(
  res: ServerResponse,
  path: string,
  q: LogQuery,
  stillRunning: () => boolean,
  closed: () => boolean,
): Promise<void> {
  const file = await open(path, 'r');
  let budget = q.limitBytes ?? Infinity;
  const send = (entries: LogEntry[]) => {
    for (const e of entries) {
      if (budget <= 0) return;
      const text = Buffer.from(renderEntry(e, q.timestamps));
      const part = text.length > budget ? text.subarray(0, budget) : text;
      budget -= part.length;
      res.write(part);
    }
  };
  try {
    let offset = 0;
    let rest = '';
    const readMore = async () => {
      const { size } = await file.stat();
      if (size <= offset) return [];
      const buf = Buffer.alloc(size - offset);
      const { bytesRead } = await file.read(buf, 0, buf.length, offset);
      offset += bytesRead;
      const taken = takeEntries(rest + buf.subarray(0, bytesRead).toString('utf8'));
      rest = taken.rest;
      return taken.entries;
    };
    send(selectInitial(await readMore(), q));
    while (q.follow && budget > 0 && !closed()) {
      const running = stillRunning();
      send(await readMore());
      // Drained after the process ended: the stream is complete.
      if (!running) break;
      await sleep(POLL_MS);
    }
  } finally {
    await file.close();
  }
}

function pickFile(entry: ContainerLogs, previous: boolean): string | undefined {
  const { attempts } = entry;
  return previous ? attempts[attempts.length - 2] : attempts[attempts.length - 1];
}

/**
 * The kubelet's container-logs endpoint, over TLS with a certificate from the cluster CA:
 * the apiserver proxies `kubectl logs` here. Only clients with a certificate from that CA
 * (the apiserver's kubelet client certificate) are served.
 */
export async function startLogsServer(
  cert: ServingCert,
  logs: LogRegistry,
  log: LogFn,
): Promise<LogsServer> {
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'https://localhost');
    if (!(req.socket as TLSSocket).authorized) {
      res.writeHead(401).end('Unauthorized\n');
      return;
    }
    if (url.pathname === '/healthz') {
      res.writeHead(200).end('ok');
      return;
    }
    const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
    if (req.method !== 'GET' || !m) {
      res.writeHead(404).end('404 page not found\n');
      return;
    }
    const [namespace, pod, container] = [m[1], m[2], m[3]].map((s) => decodeURIComponent(s ?? ''));
    const key = logKey(namespace ?? '', pod ?? '', container ?? '');
    const entry = logs.get(key);
    const q = parseQuery(url);
    const path = entry && pickFile(entry, q.previous);
    if (!entry || !path) {
      const why = q.previous
        ? `previous terminated container "${container}" in pod "${pod}" not found`
        : `container "${container}" in pod "${pod}" is waiting to start: ${entry?.waiting ?? 'ContainerCreating'}`;
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end(why);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Cache-Control': 'no-cache' });
    let closed = false;
    res.on('close', () => (closed = true));
    const stillRunning = () => {
      const now = logs.get(key);
      return !q.previous && now !== undefined && now.running && pickFile(now, false) === path;
    };
    await streamLogs(res, path, q, stillRunning, () => closed);
    res.end();
  };

  const server: Server = createServer(
    { key: cert.key, cert: cert.cert, ca: cert.ca, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      handle(req, res).catch((err) => {
        log(`logs endpoint: ${describeError(err)}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
