// Minimal GETs against the apiserver with the admin certificate: readiness checks need no
// client library and must work before discovery is up.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

export interface ProbeCredentials {
  server: string;
  caCertPath: string;
  certPath: string;
  keyPath: string;
}

export function apiGet(
  creds: ProbeCredentials,
  path: string,
  timeoutMs = 5_000,
): Promise<{ status: number; body: string }> {
  const url = new URL(path, creds.server);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        ca: readFileSync(creds.caCertPath),
        cert: readFileSync(creds.certPath),
        key: readFileSync(creds.keyPath),
        timeout: timeoutMs,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url.href} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls until `check` returns true. `abort` is consulted between polls so a dead process
 * ends the wait at once with its own explanation instead of a timeout.
 */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; abort?: () => Promise<string | undefined> },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError = '';
  for (;;) {
    const reason = await options.abort?.();
    if (reason) throw new Error(reason);
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${options.timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${lastError})` : ''}`,
      );
    }
    await sleep(options.intervalMs ?? 200);
  }
}
