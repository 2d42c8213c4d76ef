export { type GitWorkspaceOptions } from './context.js';
export {
  guardedPath,
  attachWorkspace,
  cloneWorkspace,
  lockHooks,
  removeGuard,
  teardownWorkspace,
  type GitGuard,
  type PreparedGit,
} from './workspace.js';
export { adoptRestoredClone } from './restored.js';
export {
  PUSHED_COMMITS_LIMIT,
  PUSHED_SUBJECT_LIMIT,
  pushedCommits,
  reportPushed,
  type PushBase,
} from './pushed.js';
export { resolveBranchName, resolveRemote, type ResolvedRemote } from './repo-and-branch.js';
export {
  credentialSecrets,
  loadGitCredentials,
  parseStoreLine,
  secretToken,
  type GitCredentials,
} from './credential-files.js';
export { stageCredentialsOnWorker, type WorkerCredentials } from './worker-credentials.js';
export {
  clonePrepared,
  releasePreparedClone,
  remoteDefaultHead,
  type PreparedClone,
  type RemoteHead,
} from './warm-up.js';
