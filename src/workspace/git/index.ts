export { type GitWorkspaceOptions } from './context.js';
export {
  guardedPath,
  attachWorkspace,
  cloneWorkspace,
  lockHooks,
  removeGuard,
  teardownWorkspace,
  type GitGuard,
} from './workspace.js';
export { resolveBranchName, resolveRemote, type ResolvedRemote } from './repo-and-branch.js';
export { credentialSecrets, loadGitCredentials, type GitCredentials } from './credential-files.js';
export { stageCredentialsOnWorker, type WorkerCredentials } from './worker-credentials.js';
