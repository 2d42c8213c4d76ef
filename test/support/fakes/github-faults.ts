// The faults the GitHub stand-in can be told to answer with, one per request: rate limits as
// GitHub words them, error statuses, recorded answers, broken bodies, cut connections.
import type { IncomingMessage } from 'node:http';
import type { RecordedInteraction } from './github-data.js';

export type GithubFault =
  /** 403 with GitHub's secondary-limit message; Retry-After when given. */
  | { kind: 'secondary'; retryAfterSeconds?: number }
  | { kind: 'http-429'; retryAfterSeconds: number }
  | { kind: 'status'; status: number; message: string }
  /** A recorded error answer (status, headers and body as GitHub sent them). */
  | { kind: 'recorded'; interaction: RecordedInteraction }
  /** 200 with a truncated JSON body. */
  | { kind: 'malformed' }
  /** 200 with an object where a list belongs. */
  | { kind: 'not-a-list' }
  /** A 500 whose message quotes the request's Authorization header back. */
  | { kind: 'echo-authorization' }
  /** The connection is cut before any answer. */
  | { kind: 'reset' }
  /** Never answers: the client's timeout must end the request. */
  | { kind: 'hang' };

const SECONDARY_MESSAGE =
  'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';
const DOCS = 'https://docs.github.com/rest';

export interface FaultAnswer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function faultAnswer(fault: GithubFault, request: IncomingMessage): FaultAnswer | 'raw' {
  switch (fault.kind) {
    case 'secondary':
      return {
        status: 403,
        body: { message: SECONDARY_MESSAGE, documentation_url: DOCS },
        headers:
          fault.retryAfterSeconds === undefined
            ? {}
            : { 'retry-after': String(fault.retryAfterSeconds) },
      };
    case 'http-429':
      return {
        status: 429,
        body: { message: SECONDARY_MESSAGE, documentation_url: DOCS },
        headers: { 'retry-after': String(fault.retryAfterSeconds) },
      };
    case 'status':
      return { status: fault.status, body: { message: fault.message, documentation_url: DOCS } };
    case 'recorded':
      return recordedAnswer(fault.interaction, '');
    case 'echo-authorization':
      return {
        status: 500,
        body: { message: `bad credentials: ${request.headers.authorization ?? ''}` },
      };
    case 'malformed':
    case 'not-a-list':
    case 'reset':
    case 'hang':
      return 'raw';
  }
}

export function recordedAnswer(interaction: RecordedInteraction, origin: string): FaultAnswer {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(interaction.headers)) {
    if (name === 'content-length' || name === 'connection') continue;
    headers[name] = String(value).replaceAll('https://api.github.com', origin);
  }
  return { status: interaction.status, body: interaction.response, headers };
}
