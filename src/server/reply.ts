import type http from 'node:http';
import { ArchiveError } from '../archive/types.js';
import { ApiError } from './errors.js';
import type { ApiErrorBody, ApiErrorCode } from './view-api.js';

/**
 * How the view server answers: the security headers every answer carries, a body with its
 * length, and an error as the API's error body (view-api.ts) with the code the view knows.
 */

export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const HEADERS: Record<string, string> = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

export const VIEW_CODES: Record<ApiError['code'], ApiErrorCode> = {
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  invalid_parameter: 'bad_request',
  not_found: 'not_found',
  method_not_allowed: 'bad_request',
  auth_unavailable: 'kube_unavailable',
  archive_unavailable: 'archive_unavailable',
  conflict: 'conflict',
  kube_unavailable: 'kube_unavailable',
  internal: 'internal',
};

/** Any failure as an ApiError: the archive's own errors keep their meaning, the rest is internal. */
export function failureOf(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ArchiveError)
    return error.code === 'archive_query_invalid'
      ? new ApiError('invalid_parameter', error.message)
      : new ApiError('archive_unavailable', `the archive cannot answer: ${error.code}`);
  return new ApiError('internal', 'internal error (see the server log)');
}

export function send(
  response: http.ServerResponse,
  status: number,
  body: string,
  type: string,
  extra: Record<string, string> = {},
): void {
  response.writeHead(status, {
    ...HEADERS,
    'Cache-Control': 'no-store',
    ...extra,
    'Content-Type': type,
    'Content-Length': String(Buffer.byteLength(body)),
  });
  response.end(body);
}

export const sendText = (response: http.ServerResponse, status: number, body: string): void =>
  send(response, status, body, 'text/plain; charset=utf-8');

export const sendJson = (response: http.ServerResponse, status: number, body: unknown): void =>
  send(response, status, `${JSON.stringify(body)}\n`, 'application/json; charset=utf-8');

export function sendError(response: http.ServerResponse, error: ApiError): void {
  // A stream already under way cannot turn into an error answer: cut it.
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body: ApiErrorBody & { parameter?: string } = {
    code: VIEW_CODES[error.code],
    message: error.message,
    ...(error.parameter ? { parameter: error.parameter } : {}),
  };
  sendJson(response, error.status, body);
}
