import type { Issue } from '../workflow/issue.js';
import { isActiveState } from '../workflow/states.js';
import { ensembleSize } from '../workspace/ensemble.js';

/**
 * Which issues get an agent now (docs/design.md#dispatch-rules), as one pure function over what
 * the tracker says and what is already running. The Workflow's dispatcher and
 * `lorenz poll --dry-run` both call it, so what a user debugs locally is what the cluster does.
 */

export interface DispatchSettings {
  activeStates: readonly string[];
  terminalStates: readonly string[];
  /** agent.max_concurrent_agents: slots at once across the workflow (ensemble slots count). */
  maxConcurrentAgents: number;
  /** agent.max_concurrent_agents_by_state: slots at once per state (lower-cased keys). */
  maxConcurrentAgentsByState: Readonly<Record<string, number>>;
  /** agent.ensemble_size: slots per issue unless an `ensemble:<n>` label says otherwise. */
  ensembleSize: number;
}

/** An issue the workflow already holds: running, waiting to retry, or claimed. */
export interface HeldIssue {
  issueId: string;
  /** The issue's state as last seen (counts against its state's cap). */
  state: string | null;
  slots: number;
}

export type Decision =
  | { kind: 'dispatch'; slots: number }
  | { kind: 'running' }
  | { kind: 'not-active' }
  | { kind: 'blocked'; by: string[] }
  | { kind: 'over-cap'; cap: 'workflow' | 'state'; slots: number };

export interface DispatchEntry {
  issue: Issue;
  decision: Decision;
}

const stateKey = (state: string | null): string => (state ?? '').trim().toLowerCase();

/** The key an issue is held by: its tracker id, else its identifier. */
export const issueKey = (issue: Pick<Issue, 'id' | 'identifier'>): string =>
  issue.id ?? issue.identifier;

/** Priority 1–4 first (1 most urgent), missing (or 0, Linear's "none") last. */
const priorityRank = (priority: number | null): number =>
  priority !== null && priority >= 1 && priority <= 4 ? priority : 5;

/** Dispatch order: priority, then the oldest created_at, then the identifier. */
export function compareCandidates(a: Issue, b: Issue): number {
  return (
    priorityRank(a.priority) - priorityRank(b.priority) ||
    (a.created_at ?? '\uffff').localeCompare(b.created_at ?? '\uffff') ||
    a.identifier.localeCompare(b.identifier)
  );
}

/**
 * Whether the issue has not been started (`Todo`): the tracker's state type says
 * `unstarted`, or, for trackers without types, it sits in the first active state.
 */
function unstarted(issue: Issue, settings: DispatchSettings): boolean {
  if (issue.state_type) return issue.state_type.trim().toLowerCase() === 'unstarted';
  const first = settings.activeStates[0];
  return first !== undefined && stateKey(issue.state) === stateKey(first);
}

/** Blockers that are not in a terminal state (a blocker with no state counts as open). */
function openBlockers(issue: Issue, settings: DispatchSettings): string[] {
  const terminal = new Set(settings.terminalStates.map(stateKey));
  return issue.blocked_by
    .filter((blocker) => !terminal.has(stateKey(blocker.state)))
    .map((blocker) => blocker.identifier ?? blocker.id ?? '?');
}

/**
 * Decides, in dispatch order, what happens to each candidate. Slots are granted in that
 * order: an issue that does not fit waits (`over-cap`) and a later, smaller one may still
 * fit, as in Lorenz; nothing ever exceeds a cap.
 */
export function planDispatch(
  candidates: readonly Issue[],
  held: readonly HeldIssue[],
  settings: DispatchSettings,
): DispatchEntry[] {
  const heldKeys = new Set(held.map((entry) => entry.issueId));
  let used = held.reduce((sum, entry) => sum + entry.slots, 0);
  const usedByState = new Map<string, number>();
  for (const entry of held) {
    const key = stateKey(entry.state);
    usedByState.set(key, (usedByState.get(key) ?? 0) + entry.slots);
  }
  const seen = new Set<string>();
  const entries: DispatchEntry[] = [];
  for (const issue of [...candidates].sort(compareCandidates)) {
    const key = issueKey(issue);
    if (seen.has(key)) continue;
    seen.add(key);
    if (heldKeys.has(key)) {
      entries.push({ issue, decision: { kind: 'running' } });
      continue;
    }
    if (!isActiveState(issue.state, settings)) {
      entries.push({ issue, decision: { kind: 'not-active' } });
      continue;
    }
    const blockers = unstarted(issue, settings) ? openBlockers(issue, settings) : [];
    if (blockers.length > 0) {
      entries.push({ issue, decision: { kind: 'blocked', by: blockers } });
      continue;
    }
    const slots = ensembleSize(issue, settings.ensembleSize);
    const state = stateKey(issue.state);
    const stateCap = settings.maxConcurrentAgentsByState[state];
    if (used + slots > settings.maxConcurrentAgents) {
      entries.push({ issue, decision: { kind: 'over-cap', cap: 'workflow', slots } });
      continue;
    }
    if (stateCap !== undefined && (usedByState.get(state) ?? 0) + slots > stateCap) {
      entries.push({ issue, decision: { kind: 'over-cap', cap: 'state', slots } });
      continue;
    }
    used += slots;
    usedByState.set(state, (usedByState.get(state) ?? 0) + slots);
    entries.push({ issue, decision: { kind: 'dispatch', slots } });
  }
  return entries;
}

/** One line per candidate, for `lorenz poll` and the Workflow's status. */
export function describeDecision(decision: Decision): string {
  switch (decision.kind) {
    case 'dispatch':
      return decision.slots > 1 ? `dispatch (${decision.slots} slots)` : 'dispatch';
    case 'running':
      return 'running';
    case 'not-active':
      return 'not-active';
    case 'blocked':
      return `blocked by ${decision.by.join(', ')}`;
    case 'over-cap':
      return `over-cap (${decision.cap} cap, ${decision.slots} slot${decision.slots > 1 ? 's' : ''})`;
  }
}
