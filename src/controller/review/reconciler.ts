import type { V1ConfigMap } from '@kubernetes/client-node';
import { ReviewReasons, type IssueRun, type Workflow } from '../../api/index.js';
import type { CodeHost } from '../../codehost/types.js';
import type { PullRequestTextContext } from '../../template/review-context.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import { errorMessage } from '../../workflow/errors.js';
import type { Issue } from '../../workflow/issue.js';
import { runIssue } from '../shared/run-issue.js';
import type { ReviewConfig } from '../../workflow/review-config.js';
import { isActiveState } from '../../workflow/states.js';
import { exponentialDelay } from '../runtime/backoff.js';
import type { ReconcileResult } from '../runtime/controller.js';
import {
  type RunWatcherReconcilerDeps,
  type RunWatcherStore,
  currentRun,
} from '../events/run-watcher-deps.js';
import { createRunWatcherMarks } from '../events/run-watcher-marks.js';
import { awaitingReview, reviewConfigOf } from '../shared/review-config.js';
import { reviewContextConfigMap } from '../shared/review-context.js';
import { followLook, openLook, TrackerStepError, withReview, type LookInputs } from './act.js';

/** What the review controller writes the run's status with: the store it shares (status-store.ts). */
export type ReviewStatusStore = RunWatcherStore;

export interface ReviewReconcilerDeps extends RunWatcherReconcilerDeps<ReviewStatusStore> {
  /** The Workflow's code host, with its token (read by the controller only). */
  codeHost: (workflow: Workflow, config: WorkflowConfig, review: ReviewConfig) => Promise<CodeHost>;
  /** The title and body of a new pull request (review.pr_title, review.pr_body). */
  pullRequestText: (
    review: ReviewConfig,
    issue: Issue,
    context: PullRequestTextContext,
  ) => { title: string; body: string };
  /** Creates a round's feedback ConfigMap; one already there is kept (immutable). */
  createConfigMap: (namespace: string, body: V1ConfigMap) => Promise<void>;
}

/** Code host and tracker failures are tried again after 5 s, 10 s, … up to 5 minutes. */
export const REVIEW_RETRY_BASE_MS = 5000;
export const REVIEW_RETRY_MAX_MS = 300_000;

const lower = (state: string | null | undefined) => (state ?? '').trim().toLowerCase();

/**
 * The review controller, kubebuilder's ladder (docs/review-loop.md): fetch → guards (a run
 * awaiting review, no round pending, the loop on, a branch) → act (open the pull request, or
 * read it back when it is due or woken) → status through the shared store. Code host and
 * tracker errors go into status.review (CodeHostUnavailable, TrackerUnavailable) and are
 * tried again with a backoff; nothing is dropped.
 */

export function createReviewReconciler(deps: ReviewReconcilerDeps) {
  const marks = createRunWatcherMarks();

  async function look(key: string, run: IssueRun): Promise<ReconcileResult> {
    const workflow = deps.workflows.get(run.metadata.namespace, run.spec.workflowRef.name);
    const snapshot = workflow?.status?.lastGoodConfigMap;
    if (!workflow || !snapshot) return;
    const { config } = (await deps.loadWorkflowConfig(run.metadata.namespace ?? '', snapshot))
      .loaded;
    const settings = reviewConfigOf(config);
    const branch = run.status?.git?.branch;
    if (!settings || !branch) return;
    const pull = run.status?.git?.pullRequest;
    const now = deps.now();
    const last = Date.parse(run.status?.review?.lastCheckTime ?? '');
    const due = Number.isFinite(last) ? last + settings.pollIntervalMs - now.getTime() : 0;
    if (pull && due > 0 && !marks.woken(key)) return { requeueAfter: due };
    marks.wakeTaken(key);
    const state = run.spec.issue.state ?? null;
    const issue = {
      active: isActiveState(state, config.tracker),
      terminal: config.tracker.terminalStates.some((each) => lower(each) === lower(state)),
    };
    const inputs: LookInputs = {
      run,
      host: await deps.codeHost(workflow, config, settings),
      settings,
      branch,
      writer: await deps.trackerWriter(workflow, config),
      issue,
      pullRequestText: (base) =>
        deps.pullRequestText(settings, runIssue(run), {
          branch,
          base,
          summary: null,
        }),
      storeRound: async (round, decision) => {
        await deps.createConfigMap(
          run.metadata.namespace ?? '',
          reviewContextConfigMap(run, round, decision.context),
        );
      },
      now,
    };
    const result = pull ? await followLook(inputs, pull.number) : await openLook(inputs);
    // Events before the status (as the IssueRun's are): a restart writes them again, as 409s.
    await deps.events?.(result.events);
    await deps.store.update(key, run, result.mutate);
    marks.succeeded(key);
    return result.goesOn ? { requeueAfter: settings.pollIntervalMs } : undefined;
  }

  async function reconcile(key: string): Promise<ReconcileResult> {
    const run = currentRun(deps, key);
    if (!run) return marks.forget(key);
    if (!awaitingReview(run)) return;
    // A round asked for is the IssueRun reconciler's to start: feedback waits for it.
    const review = run.status?.review;
    if ((review?.requestedRound ?? 0) > (review?.round ?? 0)) return;
    try {
      return await look(key, run);
    } catch (error) {
      const count = marks.failed(key);
      const tracker = error instanceof TrackerStepError;
      const cause = tracker ? error.failure : error;
      const reason = tracker ? ReviewReasons.TrackerUnavailable : ReviewReasons.CodeHostUnavailable;
      const message = `${tracker ? 'the tracker' : 'the code host'} failed: ${errorMessage(cause)}`;
      deps.logger?.warn({ run: key, reason, err: message }, 'review loop: will try again');
      // lastCheckTime stays: the look is still due, and the backoff says when to try again.
      await deps.store.update(key, run, (status) => withReview(status, { reason, message }));
      return { requeueAfter: exponentialDelay(count, REVIEW_RETRY_BASE_MS, REVIEW_RETRY_MAX_MS) };
    }
  }

  return {
    reconcile,
    /** A webhook said "look now" (wake.ts): the next look at this run reads it back at once. */
    wake: marks.wake,
  };
}
