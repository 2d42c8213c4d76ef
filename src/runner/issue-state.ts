import { readFile } from 'node:fs/promises';
import { isActiveState } from '../workflow/states.js';

/**
 * Whether the issue is still active, read before each continuation turn. The controller
 * keeps the tracker state in a Pod annotation that the downward API projects into a file;
 * the kubelet rewrites the file when the annotation changes, so patching the IssueRun's
 * `spec.issue.state` to a terminal state ends the turn loop.
 */
export function createIssueStateCheck(options: {
  stateFile: string;
  fallbackState: string | null;
  activeStates: readonly string[];
  terminalStates: readonly string[];
}): () => Promise<boolean> {
  return async () => {
    let state: string | null = options.fallbackState;
    try {
      state = await readFile(options.stateFile, 'utf8');
    } catch {
      // No projected file (a run outside a Pod): the snapshot's state stands.
    }
    return isActiveState(state, options);
  };
}
