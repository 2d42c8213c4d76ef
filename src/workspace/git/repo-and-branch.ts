import { renderBranchTemplate, renderRepoTemplate } from '../../template/git-templates.js';
import type { GitWorkspaceConfig } from '../../workflow/config.js';
import { LorenzError } from '../../workflow/errors.js';
import type { Issue } from '../../workflow/issue.js';

/**
 * Where the clone comes from and which branch it works on, worked out before anything runs:
 * a run that cannot name its repository or its branch fails before it touches the disk.
 */

/** `owner/name`: a short repository name that only `repo_template` may expand. */
const SHORT_REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
/** `user@host:path`, git's scp-like ssh syntax. */
const SCP_LIKE = /^[A-Za-z0-9_.-]+@[A-Za-z0-9.-]+:(?!\/\/)/;
const ALLOWED_SCHEMES = new Set(['https:', 'http:', 'ssh:', 'git:', 'file:']);

export interface ResolvedRemote {
  /** What git is given. */
  url: string;
  /** Lower-case host name (no port); null for `file:`. */
  host: string | null;
}

function checkRemote(url: string, path: string): ResolvedRemote {
  if (SCP_LIKE.test(url)) {
    const host = url.slice(url.indexOf('@') + 1, url.indexOf(':')).toLowerCase();
    return { url, host };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new LorenzError(
      'workspace_repo_no_clone_address',
      `workspace_repo_no_clone_address: ${path} ${JSON.stringify(url)} is not a clone address (https://…, ssh://…, user@host:path or owner/name with repo_template)`,
    );
  }
  if (!ALLOWED_SCHEMES.has(parsed.protocol)) {
    throw new LorenzError(
      'workspace_repo_no_clone_address',
      `workspace_repo_no_clone_address: ${path} ${JSON.stringify(url)} uses ${parsed.protocol}; use https, ssh, git or file`,
    );
  }
  // A token in the address ends up in .git/config, in logs and in the agent's reach.
  if (parsed.password !== '' || (parsed.username !== '' && parsed.protocol.startsWith('http'))) {
    throw new LorenzError(
      'invalid_workflow_config',
      `${path}: must not carry credentials (user:token@); give them through --git-credentials or the Workflow's spec.git.credentialsSecretRef`,
      { path },
    );
  }
  return { url, host: parsed.protocol === 'file:' ? null : parsed.hostname.toLowerCase() };
}

/** The clone address from `workspace.git.repo` (and `repo_template` for `owner/name`). */
export function resolveRemote(git: GitWorkspaceConfig): ResolvedRemote {
  const repo = git.repo?.trim() ?? '';
  if (repo === '') {
    throw new LorenzError(
      'workspace_repo_missing',
      'workspace_repo_missing: workspace.git names no repository; set workspace.git.repo',
    );
  }
  if (SHORT_REPO.test(repo)) {
    if (git.repoTemplate === null) {
      throw new LorenzError(
        'workspace_repo_no_clone_address',
        `workspace_repo_no_clone_address: workspace.git.repo ${JSON.stringify(repo)} is owner/name and no workspace.git.repo_template expands it`,
      );
    }
    return checkRemote(renderRepoTemplate(git.repoTemplate, repo), 'workspace.git.repo_template');
  }
  return checkRemote(repo, 'workspace.git.repo');
}

/**
 * git check-ref-format's rules for a branch name, so a bad name is refused with a reason
 * before any git runs (and never reaches git as an option: no leading `-`).
 */
export function branchNameProblem(name: string): string | null {
  if (name === '') return 'it is empty';
  if (name.length > 200) return 'it is longer than 200 characters';
  if (name.startsWith('-')) return 'it starts with "-"';
  // eslint-disable-next-line no-control-regex -- control characters are what git refuses
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name))
    return 'it contains a space, a control character or one of ~^:?*[\\';
  if (name.includes('..')) return 'it contains ".."';
  if (name.includes('@{') || name === '@') return 'it contains "@{" or is "@"';
  if (name.includes('//') || name.startsWith('/') || name.endsWith('/'))
    return 'it has an empty path component';
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return `its component ${JSON.stringify(part)} starts with "."`;
    if (part.endsWith('.lock')) return `its component ${JSON.stringify(part)} ends with ".lock"`;
  }
  if (name.endsWith('.')) return 'it ends with "."';
  return null;
}

/** Glob match for branch patterns: `*` within a path component, `**` across them. */
export function branchMatches(pattern: string, branch: string): boolean {
  let source = '';
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index] as string;
    if (char === '*' && pattern[index + 1] === '*') {
      source += '.*';
      index += 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`).test(branch);
}

/** Branches never pushed from the workspace: the default one, main, master and the globs. */
export function protectedPatterns(git: GitWorkspaceConfig, defaultBranch: string | null): string[] {
  return [
    ...new Set([...(defaultBranch ? [defaultBranch] : []), 'main', 'master', ...git.protected]),
  ];
}

export function isProtectedBranch(patterns: readonly string[], branch: string): boolean {
  return patterns.some((pattern) => branchMatches(pattern, branch));
}

/**
 * The issue's branch, from `workspace.git.branch`: worked out once per run (an IssueRun keeps
 * it in its status and passes it in, so renaming the issue never moves the branch).
 */
export function resolveBranchName(git: GitWorkspaceConfig, issue: Issue): string {
  const name = renderBranchTemplate(git.branch, issue);
  const problem = branchNameProblem(name);
  if (problem !== null) {
    throw new LorenzError(
      'workspace_branch_unresolved',
      `workspace_branch_unresolved: workspace.git.branch gave ${JSON.stringify(name)} for ${issue.identifier}, which is not a branch name: ${problem}`,
    );
  }
  if (isProtectedBranch(protectedPatterns(git, null), name)) {
    throw new LorenzError(
      'workspace_branch_unresolved',
      `workspace_branch_unresolved: workspace.git.branch gave ${JSON.stringify(name)} for ${issue.identifier}, a protected branch; an issue works on a branch of its own`,
    );
  }
  return name;
}
