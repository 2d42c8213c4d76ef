import { FINISHED, findCondition, type IssueRun } from '../../api/index.js';
import { SNAPSHOT_API_GROUP, VOLUME_SNAPSHOT_KIND } from '../../api/index.js';

/**
 * A superseded warm snapshot is kept this long after its successor became ready: a run that
 * read the old status.warm a moment before has that long to make its claims from it.
 */
export const WARM_GC_GRACE_MS = 60_000;

export interface ClaimView {
  phase: string | undefined;
  dataSource:
    { apiGroup?: string | undefined; kind?: string | undefined; name?: string } | undefined;
}

export interface WarmGcFacts {
  /** The Workflow's warm snapshots (label warm-of), by name. */
  snapshots: readonly string[];
  /** status.warm.snapshot while warm is on; undefined when off (all may go). */
  current: string | undefined;
  /** When the current one became ready (ms), for the grace period. */
  currentReadyAt: number | undefined;
  /** The warm-up in progress: its snapshot may be in the making. */
  building: string | undefined;
  /** The namespace's IssueRuns (every Workflow's: a run names a snapshot, not its Workflow). */
  runs: readonly IssueRun[];
  /** The namespace's claims. */
  claims: readonly ClaimView[];
  now: number;
  /** The grace period; WARM_GC_GRACE_MS unless given (tests make it short). */
  graceMs?: number | undefined;
}

export interface WarmGcPlan {
  /** Snapshots to delete now. */
  delete: string[];
  /** Superseded snapshots still in use (or in their grace period): looked at again later. */
  held: string[];
}

const finished = (run: IssueRun): boolean =>
  findCondition(run.status?.conditions, FINISHED)?.status === 'True' ||
  run.status?.phase === 'Succeeded' ||
  run.status?.phase === 'Failed';

/**
 * Which warm snapshots can go (pure): every one but the current and the one being built,
 * once no unfinished IssueRun started from it (status.workspaceSource.volumeSnapshot) and no
 * claim still Pending (not Bound yet) is being restored from it. A Bound claim holds its own copy: the
 * snapshot is no longer needed for it.
 */
export function planWarmGc(facts: WarmGcFacts): WarmGcPlan {
  const inUse = new Set<string>();
  for (const run of facts.runs) {
    const name = run.status?.workspaceSource?.volumeSnapshot;
    if (name !== undefined && !finished(run)) inUse.add(name);
  }
  for (const claim of facts.claims) {
    const source = claim.dataSource;
    if (
      claim.phase !== 'Bound' &&
      source?.kind === VOLUME_SNAPSHOT_KIND &&
      source.apiGroup === SNAPSHOT_API_GROUP &&
      source.name !== undefined
    ) {
      inUse.add(source.name);
    }
  }
  const graceOver =
    facts.currentReadyAt === undefined ||
    facts.now >= facts.currentReadyAt + (facts.graceMs ?? WARM_GC_GRACE_MS);
  const plan: WarmGcPlan = { delete: [], held: [] };
  for (const name of [...facts.snapshots].sort()) {
    if (name === facts.current || name === facts.building) continue;
    if (inUse.has(name) || (facts.current !== undefined && !graceOver)) plan.held.push(name);
    else plan.delete.push(name);
  }
  return plan;
}
