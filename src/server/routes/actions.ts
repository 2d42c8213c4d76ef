import { runAction, type Action } from '../actions.js';
import { sendJson } from '../reply.js';
import type { ObjectCall } from './context.js';

/** The POSTs: cancel or retry a run, suspend or resume a Workflow. */

const ACTIONS = new Map<string, readonly string[]>([
  ['runs', ['cancel', 'retry']],
  ['workflows', ['suspend', 'resume']],
]);

/** Whether `action` is one of the actions on objects of `kind` (runs, workflows). */
export function isAction(kind: string | undefined, action: string | undefined): action is Action {
  return action !== undefined && (ACTIONS.get(kind ?? '') ?? []).includes(action);
}

export async function act(call: ObjectCall, action: Action): Promise<void> {
  sendJson(call.response, 200, await runAction(call.who, action, call.namespace, call.name));
}
