import { FINISHED, findCondition, type IssueRun } from '../../api/index.js';

/**
 * What of a run the Workflow's status is computed from: its counts (runCounts: which
 * Workflow, finished or not, the phase) and its day (dayBudget: the issue, what was spent,
 * the models priced, whether agents that took turns reported usage). Dispatch reads runs too,
 * but only when a poll is due, on its own schedule.
 */
function statusInputs(run: IssueRun): unknown[] {
  const status = run.status;
  return [
    run.spec.workflowRef.name,
    run.spec.issue.identifier,
    findCondition(status?.conditions, FINISHED)?.status,
    status?.phase,
    status?.usageDays,
    status?.usage,
    (status?.slots ?? []).map((slot) => [slot.turns ?? 0, slot.usage]),
  ];
}

/**
 * Whether an update of a run can change its Workflow's status. Each reconcile of a
 * Workflow reads every run of its namespace, so the updates that change nothing it reads
 * (a finalizer added or removed, a deletion begun, a hook's progress, labels) do not
 * make one: in a burst of runs that was a pass over all of them per update.
 */
export function changesWorkflowStatus(before: IssueRun, after: IssueRun): boolean {
  if (before.metadata.uid !== after.metadata.uid) return true;
  return JSON.stringify(statusInputs(before)) !== JSON.stringify(statusInputs(after));
}
