import { readFile } from 'node:fs/promises';

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
  const normalize = (state: string): string => state.trim().toLowerCase();
  const active = new Set(options.activeStates.map(normalize));
  const terminal = new Set(options.terminalStates.map(normalize));
  return async () => {
    let state: string | null = options.fallbackState;
    try {
      state = await readFile(options.stateFile, 'utf8');
    } catch {
      // No projected file (a run outside a Pod): the snapshot's state stands.
    }
    if (state === null || state.trim() === '') return false;
    const key = normalize(state);
    return active.has(key) && !terminal.has(key);
  };
}
