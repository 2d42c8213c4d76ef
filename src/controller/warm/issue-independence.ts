import { WARM_UP_ISSUE } from '../../api/index.js';
import { renderHookCommand } from '../../template/hook.js';
import { errorMessage } from '../../workflow/errors.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import type { Issue } from '../../workflow/issue.js';

/** The issue a warm-up renders with (WARM_UP_ISSUE), as the engine's Issue type holds it. */
export const WARM_UP_RENDER_ISSUE: Issue = {
  ...WARM_UP_ISSUE,
  blocked_by: [],
  labels: [],
  assigned_to_worker: true,
};

/**
 * A second issue unlike the warm-up's in every field a template can read: an after_create
 * that reads any of them renders differently for the two.
 */
export const OTHER_ISSUE: Issue = {
  id: 'lorenz-warm-check-id',
  identifier: 'CHECK-2',
  title: 'Another issue',
  description: 'Not the warm-up issue.',
  priority: 2,
  state: 'Todo',
  state_type: 'unstarted',
  branch_name: 'check-2-branch',
  url: 'https://tracker.invalid/CHECK-2',
  assignee_id: 'someone',
  blocked_by: [{ id: 'b', identifier: 'CHECK-1', state: 'Todo', state_type: 'unstarted' }],
  labels: ['check'],
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-02T00:00:00Z',
  assigned_to_worker: false,
};

/** How long each render may take: the same bound as a run's inputs per template. */
const RENDER_LIMIT_MS = 250;

/**
 * Why after_create cannot be warmed, or null when it can: a warm snapshot serves every issue,
 * so the after_create it ran must be the one every issue would run. It is rendered for the
 * warm-up's issue and for another; any difference (or a render that fails) refuses warm.
 */
export function afterCreateDependsOnIssue(config: WorkflowConfig): string | null {
  const command = config.hooks.afterCreate;
  if (command === null) return null;
  let warm: string;
  let other: string;
  try {
    warm = renderHookCommand(command, WARM_UP_RENDER_ISSUE, RENDER_LIMIT_MS);
    other = renderHookCommand(command, OTHER_ISSUE, RENDER_LIMIT_MS);
  } catch (error) {
    return `hooks.after_create does not render for the warm-up (${errorMessage(error)})`;
  }
  if (warm === other) return null;
  return 'hooks.after_create depends on the issue (it renders differently for two issues), and a warm snapshot serves every issue: move what depends on the issue to before_run';
}
