// Every call the web view makes to `lorenz server`'s /api/v1: the bearer token (kept in
// sessionStorage, so it leaves with the tab) on each request, the X-Lorenz-Request header on
// POSTs, errors as ApiError with the server's stable code.
import type { ActionResult, ApiErrorBody, ApiErrorCode } from '../../src/server/view-api.js';
import { SseParser, backoffMs, type SseMessage } from './sse.js';

const TOKEN_KEY = 'lorenz.bearerToken';

export type ClientErrorCode = ApiErrorCode | 'network' | 'bad_response';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ClientErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Listener = () => void;
const unauthenticatedListeners = new Set<Listener>();

/** Called whenever a request comes back 401: the page asks for a token again. */
export function onUnauthenticated(listener: Listener): () => void {
  unauthenticatedListeners.add(listener);
  return () => unauthenticatedListeners.delete(listener);
}

export function getToken(): string | undefined {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export function setToken(token: string | undefined): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = { ...extra };
  const token = getToken();
  if (token) out['Authorization'] = `Bearer ${token}`;
  return out;
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

async function failure(response: Response): Promise<ApiError> {
  if (response.status === 401) for (const listener of unauthenticatedListeners) listener();
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (isErrorBody(body)) return new ApiError(response.status, body.code, body.message);
  return new ApiError(
    response.status,
    response.status === 401 ? 'unauthenticated' : 'internal',
    `${response.status} ${response.statusText}`,
  );
}

async function send(path: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, { ...init, credentials: 'same-origin', cache: 'no-store' });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'network', `cannot reach the server: ${String(err)}`);
  }
  if (!response.ok) throw await failure(response);
  return response;
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await send(path, { headers: headers({ Accept: 'application/json' }), signal });
  try {
    return (await response.json()) as T;
  } catch {
    throw new ApiError(response.status, 'bad_response', `${path}: the answer is not JSON`);
  }
}

export async function getText(path: string, signal?: AbortSignal): Promise<string> {
  const response = await send(path, { headers: headers({ Accept: 'text/plain' }), signal });
  return response.text();
}

export async function postAction(path: string): Promise<ActionResult> {
  const response = await send(path, {
    method: 'POST',
    headers: headers({ Accept: 'application/json', 'X-Lorenz-Request': '1' }),
  });
  return (await response.json()) as ActionResult;
}

/** A POST with a JSON body (the decide action's DecideRequest). */
export async function postJson(path: string, body: unknown): Promise<ActionResult> {
  const response = await send(path, {
    method: 'POST',
    headers: headers({
      Accept: 'application/json',
      'Content-Type': 'application/json',
      'X-Lorenz-Request': '1',
    }),
    body: JSON.stringify(body),
  });
  return (await response.json()) as ActionResult;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`;
  return String(err);
}

/** The message of an SSE `error` event's ApiErrorBody, or the data as it came. */
export function streamErrorText(data: string): string {
  try {
    const body: unknown = JSON.parse(data);
    if (isErrorBody(body)) return `${body.message} (${body.code})`;
  } catch {
    // Not JSON: shown as it came.
  }
  return data;
}

export interface StreamHandlers {
  onMessage(message: SseMessage): void;
  /** Connected (again): a fresh stream starts from the beginning of what it sends. */
  onOpen?(): void;
  onError?(err: ApiError): void;
  /** The stream ended and will not be read again (only when `reconnect` is false). */
  onClose?(): void;
}

export interface StreamOptions {
  /** A message after which the stream is done (a transcript's `end`). */
  until?: (message: SseMessage) => boolean;
  /** Open it again when it ends or breaks (default true). */
  reconnect?: boolean;
}

/**
 * Reads an SSE stream with fetch() and reconnects with backoff until `signal` aborts or
 * `until` returns true for a message. A 4xx other than 429 stops it: asking again would get
 * the same answer.
 */
export function streamEvents(
  path: string,
  handlers: StreamHandlers,
  signal: AbortSignal,
  options: StreamOptions = {},
): void {
  const until = options.until ?? (() => false);
  const reconnect = options.reconnect ?? true;
  let attempt = 0;
  const run = async (): Promise<void> => {
    while (!signal.aborted) {
      try {
        const response = await send(path, {
          headers: headers({ Accept: 'text/event-stream' }),
          signal,
        });
        if (!response.body) throw new ApiError(response.status, 'bad_response', 'no body');
        attempt = 0;
        handlers.onOpen?.();
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        const parser = new SseParser();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          for (const message of parser.feed(value)) {
            handlers.onMessage(message);
            if (until(message)) {
              await reader.cancel();
              return;
            }
          }
        }
        if (!reconnect) {
          handlers.onClose?.();
          return;
        }
      } catch (err) {
        if (signal.aborted) return;
        const apiError =
          err instanceof ApiError
            ? err
            : new ApiError(0, 'network', `stream broke: ${String(err)}`);
        handlers.onError?.(apiError);
        if (!reconnect) return;
        if (apiError.status >= 400 && apiError.status < 500 && apiError.status !== 429) return;
      }
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt++)));
    }
  };
  void run();
}
