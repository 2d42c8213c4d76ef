import { hookNeedsTemplating, renderHookCommand } from '../template/hook.js';
import { loadWorkflowText } from '../template/load-workflow.js';
import { normalizeIssue } from '../workflow/issue.js';

/**
 * Runs, at snapshot build time, what every start runs first, so that the snapshot holds it
 * done: zod compiles a schema's parser at its first parse, liquidjs and yaml build their
 * tables. Nothing here is kept but those caches: the results are thrown away, no file is
 * read, no environment variable consulted.
 */
const SAMPLE_WORKFLOW = `---
tracker:
  kind: local
  active_states: [Todo, In Progress]
  terminal_states: [Done]
workspace:
  root: /nonexistent/lorenz-snapshot
hooks:
  after_create: 'echo {{ issue.identifier }}'
  before_run: 'true'
  after_run: 'true'
  before_remove: 'true'
  timeout_ms: 60000
agent:
  max_turns: 3
---
Work on {{ issue.identifier }}: {{ issue.title }}{% if attempt %} (attempt {{ attempt }}){% endif %}
`;

export function warmUpEngine(): void {
  const { config } = loadWorkflowText(SAMPLE_WORKFLOW, 'snapshot warm-up');
  const issue = normalizeIssue(
    { identifier: 'WARM-1', title: 'warm-up', state: 'Todo', labels: ['a'] },
    'snapshot warm-up',
  );
  const hook = config.hooks.afterCreate;
  if (hook !== null && hookNeedsTemplating(hook)) renderHookCommand(hook, issue);
}
