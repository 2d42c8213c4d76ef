// The review: section the review-loop tests start from (docs/review-loop.md), and the fakes'
// WORKFLOW.md loaded with it: each test changes only the settings it is about.
import type { RunnableWorkflow } from '../../../src/controller/shared/config-snapshot.js';
import { loadWorkflowText } from '../../../src/template/load-workflow.js';
import type { ReviewConfig } from '../../../src/workflow/review-config.js';
import { workflowText } from './objects.js';

/** The branch the review tests' run ENG-1 has kept in its status (status.git.branch). */
export const BRANCH = 'lorenz/eng-1';

/** A GitHub review of two rounds at most, titled by the issue, that moves a merged issue to Done. */
export const reviewConfig = (fields: Partial<ReviewConfig> = {}): ReviewConfig => ({
  host: 'github',
  apiUrl: null,
  prTitle: '{{ issue.identifier }}',
  prBody: '',
  draft: false,
  maxRounds: 2,
  onApproved: 'Approved',
  onMerged: 'Done',
  requiredChecks: [],
  continuationPrompt: '',
  pollIntervalMs: 60_000,
  ...fields,
});

/** The fakes' WORKFLOW.md with a workspace.git repo, as loaded, its review section `review`. */
export function runnableWithReview(review: ReviewConfig | null): RunnableWorkflow {
  const text = workflowText().replace(
    'hooks:\n',
    'workspace:\n  git:\n    repo: https://git.example.com/acme/app.git\nhooks:\n',
  );
  const loaded = loadWorkflowText(text, 'test');
  const config = { ...loaded.config, review };
  return { text, digest: 'd', loaded: { ...loaded, config } };
}
