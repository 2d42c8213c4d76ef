// The demo's approvals walk-through (hack/lib/samples.sh show_approvals, in real bash against
// a stand-in kubectl): it waits for the request, shows it, answers it with a `/approve`
// comment added to the issue in the Workflow's WORKFLOW.md (hack/lib/board-comment.mjs, real
// node), waits for the run to finish and prints the approval Events; every wait is bounded,
// and a walk-through that does not get there says where it stopped and returns 0.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { node24, repoRoot, scratchDir } from './scratch.js';

const scratch = scratchDir('lorenz-demo-approvals-');

const WORKFLOW_MD = [
  '---',
  'tracker:',
  '  kind: memory',
  '  issues:',
  '    - id: "a0"',
  '      identifier: APPROVE-0',
  '      state: Done',
  '    - id: "a1"',
  '      identifier: APPROVE-1',
  '      title: Publish the release branch',
  '      state: Todo',
  '      priority: 1',
  'polling:',
  '  interval_ms: 2000',
  '---',
  'Do it.',
].join('\n');
const workflowJson = JSON.stringify({
  metadata: { name: 'approvals' },
  spec: { workflow: WORKFLOW_MD },
});

function boardComment(input: string, issue = 'APPROVE-1') {
  return spawnSync(
    node24,
    [
      join(repoRoot, 'hack/lib/board-comment.mjs'),
      issue,
      'alice',
      '/approve',
      '2026-12-02T17:00:00Z',
    ],
    { input, encoding: 'utf8' },
  );
}

describe('hack/lib/board-comment.mjs', () => {
  it("adds the comment to that issue only, as the memory tracker's comments", () => {
    const result = boardComment(workflowJson);
    expect(result.status, result.stderr).toBe(0);
    const text = (JSON.parse(result.stdout) as { spec: { workflow: string } }).spec.workflow;
    expect(text).toContain(
      [
        '      priority: 1',
        '      comments:',
        '        - { author: "alice", body: "/approve", created_at: "2026-12-02T17:00:00Z" }',
        'polling:',
      ].join('\n'),
    );
    expect(text.match(/comments:/g)).toHaveLength(1);
    // A second comment joins the first.
    const again = boardComment(JSON.stringify({ spec: { workflow: text } }));
    expect(
      (JSON.parse(again.stdout) as { spec: { workflow: string } }).spec.workflow.match(
        /\/approve/g,
      ),
    ).toHaveLength(2);
  });

  it('names an issue the board does not have', () => {
    const result = boardComment(workflowJson, 'APPROVE-9');
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      "board-comment: no issue APPROVE-9 in the Workflow's tracker.issues\n",
    );
  });
});

/**
 * show_approvals with kubectl answering from `dir`: `pending` (the request id once the run
 * asks, after `asksAfter` polls), the run's state for run_state, and Events; it records the
 * patch it gets.
 */
function showApprovals(
  name: string,
  options: { asksAfter: number; finishes: boolean; sample?: boolean },
) {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'polls'), '0');
  writeFileSync(join(dir, 'workflow.json'), workflowJson);
  const sample = join(dir, 'workflow-approvals.yaml');
  if (options.sample !== false) writeFileSync(sample, 'kind: Workflow\n');
  const script = `
    set -euo pipefail
    ROOT=${JSON.stringify(repoRoot)}
    APPROVALS_SAMPLE=${JSON.stringify(sample)}
    source "$ROOT/hack/lib/samples.sh"
    PROGRESS_PREFIX="[demo]"
    kubectl() {
      case "$*" in
        *"get issueruns -l"*"-o jsonpath"*)
          n=$(($(cat "$DIR/polls") + 1)); echo "$n" >"$DIR/polls"
          if ((n > ASKS_AFTER)); then printf 'approvals-a1|a1-s0-1\\n'; else printf 'approvals-a1|\\n'; fi ;;
        *"get issueruns -l"*) echo "NAME PHASE REASON"; echo "approvals-a1 Running AwaitingApproval" ;;
        *"get issuerun approvals-a1 -o jsonpath={range .status.inbox"*)
          printf '  permission execute: git push --force origin main\\n' ;;
        *"get issuerun approvals-a1"*)
          if [[ -f "$DIR/patch" && "$FINISHES" == 1 ]]; then printf 'Succeeded|IssueCompleted|before_remove|completed|1|True';
          else printf 'Running|AwaitingApproval|before_run|completed|1|'; fi ;;
        *"get events"*)
          printf 'HookStarted x\\nApprovalRequested issue APPROVE-1: execute git push --force origin main (rule 0)\\n'
          [[ -f "$DIR/patch" ]] && printf 'ApprovalGranted a1-s0-1 approved by alice (comment)\\n'
          true ;;
        *"get workflows.lorenz.dev approvals -o json"*) cat "$DIR/workflow.json" ;;
        *"patch workflows.lorenz.dev approvals"*) printf '%s' "\${@: -1}" >"$DIR/patch" ;;
        *) ;;
      esac
    }
    show_approvals default 4`;
  const result = spawnSync('bash', ['-c', script], {
    encoding: 'utf8',
    env: {
      ...process.env,
      DIR: dir,
      NODE24: node24,
      ASKS_AFTER: String(options.asksAfter),
      FINISHES: options.finishes ? '1' : '0',
      LORENZ_PROGRESS_INTERVAL: '1',
    },
    timeout: 30_000,
  });
  let patch: string | undefined;
  try {
    patch = readFileSync(join(dir, 'patch'), 'utf8');
  } catch {
    patch = undefined;
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, patch };
}

describe('the approvals walk-through (show_approvals)', () => {
  it('waits for the request, shows it, approves it on the board, and prints the approval Events', () => {
    const result = showApprovals('approves', { asksAfter: 1, finishes: true });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('issuerun/approvals-a1 waits on request a1-s0-1:');
    expect(result.stdout).toContain('approvals-a1 Running AwaitingApproval');
    expect(result.stdout).toContain('  permission execute: git push --force origin main');
    expect(result.stdout).toContain('  ApprovalRequested issue APPROVE-1');
    expect(result.stdout).toContain('a comment /approve on APPROVE-1');
    const patch = JSON.parse(result.patch ?? '{}') as { spec?: { workflow?: string } };
    expect(patch.spec?.workflow).toMatch(
      /identifier: APPROVE-1[\s\S]*comments:\n {8}- \{ author: "alice", body: "\/approve", created_at: "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ" \}/,
    );
    expect(result.stdout).toContain(
      'issuerun/approvals-a1 finished after the approval: Succeeded (IssueCompleted)',
    );
    expect(result.stdout).toMatch(
      /approval Events of issuerun\/approvals-a1:\n {2}ApprovalRequested .*\n {2}ApprovalGranted a1-s0-1 approved by alice/,
    );
    expect(result.stdout).not.toContain('HookStarted');
  });

  it('says so and returns when no request comes in time', () => {
    const result = showApprovals('never-asks', { asksAfter: 1_000, finishes: false });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('(no request waits after 4s');
    expect(result.stderr).toContain(
      "[demo] waiting for the approvals sample's request: approvals-a1|",
    );
    expect(result.patch).toBeUndefined();
  });

  it('says so and returns when the run does not finish after the approval', () => {
    const result = showApprovals('never-finishes', { asksAfter: 0, finishes: false });
    expect(result.status).toBe(0);
    expect(result.patch).toBeDefined();
    expect(result.stdout).toContain(
      '(issuerun/approvals-a1 has not finished 4s after the approval',
    );
    expect(result.stdout).toContain('ApprovalGranted');
  });

  it('is skipped, saying so, without the sample', () => {
    const result = showApprovals('no-sample', { asksAfter: 0, finishes: true, sample: false });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      /^\(no .*workflow-approvals.yaml: the approvals walk-through is skipped\)\n$/,
    );
  });
});
