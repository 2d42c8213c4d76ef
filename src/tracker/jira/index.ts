// The `jira` tracker adapter: Jira Cloud REST v3 with Basic auth (email + API token).
// Its writer (the agent tools) comments in ADF, edits comments through the issue's own path,
// moves issues along the workflow's transitions and creates Tasks in the project.
export {
  JIRA_BULK_FETCH_PATH,
  JIRA_BULK_FETCH_SIZE,
  JIRA_MAX_PAGES,
  JIRA_PAGE_SIZE,
  JIRA_SEARCH_PATH,
  type JiraTrackerOptions,
  createJiraTracker,
} from './adapter.js';
export { JIRA_FIELDS, adfToText, jiraPriority, jiraStateType } from './normalize.js';
export { JIRA_API_TOKEN_VARIABLE, type JiraTrackerConfig, resolveJiraToken } from './settings.js';
export { JIRA_REQUEST_TIMEOUT_MS } from './transport.js';
export { textToAdf } from './adf.js';
export { JIRA_COMMENT_PAGE_SIZE, JIRA_NEW_ISSUE_TYPE, jiraComment } from './writer.js';
