import type http from 'node:http';
import { ISSUERUN_PLURAL } from '../api/constants.js';
import { InboxDecisionError, type DecisionInput } from '../api/inbox-decisions.js';
import { KubeApiError } from '../controller/runtime/client.js';
import type { CallerAccess } from './access.js';
import { writeDecision } from './decisions.js';
import { ApiError } from './errors.js';
import { isRecord } from './json.js';
import type { ActionResult, DecideRequest } from './view-api.js';

/**
 * The web view's Approve / Approve always / Deny / Answer: POST .../runs/{name}/decide with a
 * DecideRequest. Reviewed first ("patch issueruns", a clean 403), then written with the
 * caller's own client through the same code as `lorenz approve` (decisions.ts), so the
 * apiserver's RBAC and admission decide; `by` is the caller's user name.
 */

/** The most a decide body may hold: an answer at its limit, JSON-escaped, and a margin. */
export const DECIDE_BODY_LIMIT = 128 * 1024;

const VERDICTS: readonly string[] = ['approve', 'approve_always', 'deny', 'answer'];

/** The request's JSON body, bounded; invalid_parameter for anything that is not a DecideRequest. */
export async function readDecideBody(request: http.IncomingMessage): Promise<DecideRequest> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > DECIDE_BODY_LIMIT)
      throw new ApiError(
        'invalid_parameter',
        `the body is over ${DECIDE_BODY_LIMIT} bytes`,
        'body',
      );
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ApiError('invalid_parameter', 'the body is not JSON', 'body');
  }
  return decideRequestOf(body);
}

export function decideRequestOf(body: unknown): DecideRequest {
  const bad = (why: string) => new ApiError('invalid_parameter', `body: ${why}`, 'body');
  if (!isRecord(body)) throw bad('not a JSON object');
  const { requestId, verdict, reason, answer } = body;
  if (typeof verdict !== 'string' || !VERDICTS.includes(verdict))
    throw bad(`verdict must be one of ${VERDICTS.join(', ')}`);
  for (const [key, value] of Object.entries({ requestId, reason, answer }))
    if (value !== undefined && typeof value !== 'string') throw bad(`${key} must be a string`);
  return {
    verdict: verdict as DecideRequest['verdict'],
    ...(typeof requestId === 'string' && requestId ? { requestId } : {}),
    ...(typeof reason === 'string' && reason ? { reason } : {}),
    ...(typeof answer === 'string' ? { answer } : {}),
  };
}

const CONFLICTS = new Set(['no_pending_request', 'request_not_found', 'already_decided']);

function decideFailure(error: unknown, what: string): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof InboxDecisionError)
    return CONFLICTS.has(error.code)
      ? new ApiError('conflict', `${what}: ${error.message}`)
      : new ApiError('invalid_parameter', `${what}: ${error.message}`, 'body');
  if (error instanceof KubeApiError) {
    const detail = error.message.split('\n')[0] ?? '';
    if (error.statusCode === 403) return new ApiError('forbidden', detail);
    if (error.statusCode === 401) return new ApiError('unauthenticated', detail);
    if (error.statusCode === 409)
      return new ApiError(
        'conflict',
        `${what} kept changing while the decision was written: ${detail}`,
      );
    if (error.statusCode === 404) return new ApiError('not_found', `${what} not found`);
    if (error.statusCode === 422 || error.statusCode === 400)
      return new ApiError('invalid_parameter', detail, 'body');
  }
  return new ApiError('kube_unavailable', `the Kubernetes API failed: ${(error as Error).message}`);
}

export async function decideAction(
  access: CallerAccess,
  namespace: string,
  name: string,
  body: DecideRequest,
): Promise<ActionResult> {
  const attributes = { verb: 'patch', resource: ISSUERUN_PLURAL, namespace, name } as const;
  if (!(await access.may(attributes)))
    throw new ApiError(
      'forbidden',
      `${access.caller.username} may not patch ${ISSUERUN_PLURAL}.lorenz.dev ${name} in namespace ${namespace}`,
    );
  const what = `IssueRun ${namespace}/${name}`;
  const input: DecisionInput = {
    verdict: body.verdict,
    ...(body.requestId ? { requestId: body.requestId } : {}),
    ...(body.reason ? { reason: body.reason } : {}),
    ...(body.answer !== undefined ? { answer: body.answer } : {}),
    by: access.caller.username,
  };
  const writer = access.writer();
  try {
    const plan = await writeDecision(writer.client, namespace, name, input);
    if (!plan) throw new ApiError('not_found', `${what} not found`);
    return {
      action: 'decided',
      namespace,
      name,
      requestId: plan.entry.requestId,
      verdict: plan.entry.verdict,
    };
  } catch (error) {
    throw decideFailure(error, what);
  } finally {
    writer.release();
  }
}
