import type { IssueRun } from '../../api/index.js';
import type { GitWorkspaceConfig } from '../../workflow/config.js';
import { isLorenzError } from '../../workflow/errors.js';
import { runIssue } from '../shared/run-issue.js';
import { resolveBranchName, resolveRemote } from '../../workspace/git/index.js';
import { reasonForErrorCode } from './pod-status.js';

/**
 * The branch of a run with `workspace.git`, worked out once: the first time from the
 * branch template and the issue, then always the one its status keeps. A branch rendered
 * again on a later attempt could differ (the template or the issue changed) and would leave
 * the work of the earlier attempts on a branch nobody pushes to any more.
 */
export type BranchDecision =
  /** No workspace.git: the run has no branch. */
  | { kind: 'none' }
  /** The branch the status keeps. */
  | { kind: 'stored'; branch: string }
  /** Worked out just now: to be stored before anything is rendered with it. */
  | { kind: 'new'; branch: string }
  /** It cannot be worked out: the run fails before it has a Pod. */
  | { kind: 'unresolved'; reason: string; message: string };

/**
 * Decides the branch of a run. The clone address is checked too: a run whose repository
 * cannot be named fails here, with its reason, rather than in a Pod.
 */
export function decideBranch(git: GitWorkspaceConfig | null, run: IssueRun): BranchDecision {
  if (!git) return { kind: 'none' };
  try {
    resolveRemote(git);
    const stored = run.status?.git?.branch;
    if (stored) return { kind: 'stored', branch: stored };
    return {
      kind: 'new',
      branch: resolveBranchName(git, runIssue(run)),
    };
  } catch (error) {
    if (!isLorenzError(error)) throw error;
    return { kind: 'unresolved', reason: reasonForErrorCode(error.code), message: error.message };
  }
}

/** The branch for the run's inputs, or undefined when it has none (or none yet). */
export const decidedBranch = (decision: BranchDecision): string | undefined =>
  decision.kind === 'stored' || decision.kind === 'new' ? decision.branch : undefined;
