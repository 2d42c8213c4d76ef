import * as acp from '@agentclientprotocol/sdk/unstable';
import type { Bridge } from './bridge.js';

/**
 * What the client side of the connection does with the agent's requests and notifications.
 * The session runtime supplies these; the turn in progress decides the answers.
 */
export interface ClientHandlers {
  sessionUpdate(notification: acp.SessionNotification): void;
  /** May wait (for a person, agent.approvals): the SDK's onRequest takes a promise. */
  requestPermission(
    request: acp.RequestPermissionRequest,
  ): acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;
  requestInput(
    request: acp.CreateElicitationRequest,
  ): acp.CreateElicitationResponse | Promise<acp.CreateElicitationResponse>;
}

/**
 * Connect an ACP client to a bridge's stdio. The unstable entrypoint is used because the
 * token counts of a turn (PromptResponse.usage) are an unstable field: the stable surface
 * does not type them. We advertise no fs or terminal capability: the agent works in its
 * own cwd with its own tools.
 */
export function connectClient(bridge: Bridge, handlers: ClientHandlers): acp.ClientConnection {
  const app = acp
    .client({ name: 'lorenz' })
    .onNotification('session/update', ({ params }) => handlers.sessionUpdate(params))
    .onRequest('session/request_permission', ({ params }) => handlers.requestPermission(params))
    .onRequest('elicitation/create', ({ params }) => handlers.requestInput(params));
  return app.connect(acp.ndJsonStream(bridge.output, bridge.input));
}

export const CLIENT_CAPABILITIES: acp.ClientCapabilities = {
  fs: { readTextFile: false, writeTextFile: false },
  terminal: false,
};

export const PROTOCOL_VERSION = acp.PROTOCOL_VERSION;

export type { acp };
