export { createTokenVerifier, type TokenVerifier, type Verification } from './auth.js';
export {
  createToolsGateway,
  MCP_PATH,
  type ToolsGateway,
  type ToolsGatewayOptions,
} from './gateway.js';
export {
  createInboxRoutes,
  DEFAULT_INBOX_BURST,
  DEFAULT_INBOX_CALLS_PER_MINUTE,
  DEFAULT_INBOX_MAX_BODY_BYTES,
  INBOX_PATH_PREFIX,
  InboxHttpError,
  isInboxPath,
  type InboxErrorCode,
  type InboxRoutes,
} from './inbox-routes.js';
export {
  createRateLimiter,
  DEFAULT_BURST,
  DEFAULT_CALLS_PER_MINUTE,
  type RateLimiter,
  type RateVerdict,
} from './limiter.js';
export {
  parseBindAddress,
  startToolsServer,
  TOOLS_STOP_GRACE_MS,
  type ToolsServer,
} from './server.js';
export {
  bearerToken,
  mintToken,
  parseToken,
  sha256HexEqual,
  tokenSha256,
  TOKEN_VERSION,
  type TokenSubject,
} from './token.js';
export { allowedStatesOf, REVIEW_STATE, TOOL_NAMES, toolNamesFor, type ToolName } from './tools.js';
export type * from './types.js';
