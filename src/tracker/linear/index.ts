// The `linear` tracker adapter: GraphQL over HTTPS against Linear's API.
export { LINEAR_MAX_PAGES, type LinearTrackerOptions, createLinearTracker } from './adapter.js';
export { LINEAR_PAGE_SIZE } from './queries.js';
export {
  LINEAR_API_KEY_VARIABLE,
  LINEAR_DEFAULT_ENDPOINT,
  type LinearTrackerConfig,
  resolveLinearApiKey,
} from './settings.js';
export { LINEAR_REQUEST_TIMEOUT_MS } from './transport.js';
