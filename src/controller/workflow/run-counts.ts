import { FINISHED, findCondition, type IssueRun, type WorkflowRunCounts } from '../../api/index.js';

/** How many of a Workflow's runs are active, succeeded and failed. */
export function runCounts(runs: readonly IssueRun[], workflow: string): WorkflowRunCounts {
  const counts = { active: 0, succeeded: 0, failed: 0 };
  for (const run of runs) {
    if (run.spec.workflowRef.name !== workflow) continue;
    if (findCondition(run.status?.conditions, FINISHED)?.status !== 'True') counts.active += 1;
    else if (run.status?.phase === 'Succeeded') counts.succeeded += 1;
    else counts.failed += 1;
  }
  return counts;
}
