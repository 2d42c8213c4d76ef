import { runAction, type Action } from '../actions.js';
import { decideAction, readDecideBody } from '../decide.js';
import { sendJson } from '../reply.js';
import type { ObjectCall } from './context.js';

/** The POSTs: cancel, retry or decide on a run, suspend or resume a Workflow. */

/** decide: answer a request the run's agent waits on (a JSON body, decide.ts). */
export type RouteAction = Action | 'decide';

const ACTIONS = new Map<string, readonly string[]>([
  ['runs', ['cancel', 'retry', 'decide']],
  ['workflows', ['suspend', 'resume']],
]);

/** Whether `action` is one of the actions on objects of `kind` (runs, workflows). */
export function isAction(
  kind: string | undefined,
  action: string | undefined,
): action is RouteAction {
  return action !== undefined && (ACTIONS.get(kind ?? '') ?? []).includes(action);
}

export async function act(call: ObjectCall, action: RouteAction): Promise<void> {
  if (action === 'decide') {
    const body = await readDecideBody(call.request);
    sendJson(call.response, 200, await decideAction(call.who, call.namespace, call.name, body));
    return;
  }
  sendJson(call.response, 200, await runAction(call.who, action, call.namespace, call.name));
}
