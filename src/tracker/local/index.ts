// The `local` tracker adapter: a board of Markdown issue files in a directory or a ConfigMap.
export { type LocalTrackerOptions, createLocalTracker, localBoardDirectory } from './adapter.js';
export { BACKLOG_STATE, LOCAL_MAX_FILE_BYTES } from './board.js';
export {
  COMMENTS_HEADING,
  COMMENTS_MARKER,
  type LocalComment,
  type LocalIssueFile,
  parseLocalIssue,
} from './parse.js';
export {
  LOCAL_DEFAULT_ID_PREFIX,
  LOCAL_DEFAULT_PATH,
  LOCAL_ID_PREFIX_PATTERN,
  type LocalTrackerConfig,
} from './settings.js';
export {
  type LocalBoardLocation,
  type NewLocalIssue,
  appendLocalIssueComment,
  createLocalIssue,
  readLocalIssue,
  replaceLocalIssueComment,
  setLocalIssueStatus,
  writeFileAtomic,
} from './write.js';
