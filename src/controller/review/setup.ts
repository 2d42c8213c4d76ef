import type { Logger } from 'pino';
import type { IssueRun } from '../../api/index.js';
import { runWatcherDeps } from '../events/run-watcher-deps.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, isAlreadyExists, resourcePath } from '../runtime/client.js';
import { objectKey } from '../runtime/informer.js';
import type { Manager } from '../runtime/manager.js';
import { awaitingReview } from '../shared/review-config.js';
import { renderPullRequestText } from '../../template/review.js';
import type { TrackerCache } from '../shared/trackers.js';
import { runsOfWake, type WakeBoard, type WakeTarget } from '../shared/wake.js';
import {
  createReviewReconciler,
  type ReviewReconcilerDeps,
  type ReviewStatusStore,
} from './reconciler.js';

export interface ReviewControllerOptions {
  client: KubeClient;
  identity: string;
  logger: Logger;
  /** The IssueRun status store, shared with the IssueRun controller (status-store.ts). */
  store: ReviewStatusStore;
  trackers: TrackerCache;
  /** The Workflow's code host with its token (code-hosts.ts). */
  codeHost: ReviewReconcilerDeps['codeHost'];
  /** Webhook wakes (docs/webhooks.md); polling alone without it. */
  wakes?: WakeBoard | undefined;
}

/** Few at once: each look is a handful of code host requests, and idle ones cost none. */
const CONCURRENCY = 4;

/**
 * The review controller with what it watches (docs/review-loop.md): IssueRuns, of which it
 * looks only at those awaiting review, and the WakeBoard's `review` wakes, which make the
 * Workflow's runs awaiting review (on the branch, when the wake names one) look at once.
 */
export function setupReviewController(manager: Manager, options: ReviewControllerOptions): void {
  const { client } = options;
  const deps = runWatcherDeps(manager, options);
  const { issueRuns } = deps;
  const reviewer = createReviewReconciler({
    ...deps,
    codeHost: options.codeHost,
    pullRequestText: (review, issue, context) =>
      renderPullRequestText(review, { issue, ...context }),
    createConfigMap: async (namespace, body) => {
      try {
        await client.request({
          method: 'POST',
          path: resourcePath(CONFIGMAPS, namespace),
          body,
        });
      } catch (error) {
        // Immutable and named by its round: one written before a restart is that round's.
        if (!isAlreadyExists(error)) throw error;
      }
    },
  });
  const controller = manager.controller({
    name: 'review',
    concurrency: CONCURRENCY,
    reconcile: reviewer.reconcile,
  });
  const onRun = (run: IssueRun) => {
    if (awaitingReview(run)) controller.enqueue(objectKey(run));
  };
  issueRuns.onAdd(onRun);
  issueRuns.onUpdate((_old, run) => onRun(run));
  options.wakes?.subscribe('review', (target) => {
    for (const key of runsToWake(issueRuns.list(target.namespace), target)) {
      reviewer.wake(key);
      controller.enqueue(key);
    }
  });
}

/** The runs a `review` wake is for: the Workflow's runs awaiting review, on its branch if named. */
export function runsToWake(runs: readonly IssueRun[], target: WakeTarget): string[] {
  if (target.kind !== 'review') return [];
  return runsOfWake(
    runs,
    target,
    (run) =>
      awaitingReview(run) &&
      (target.branch === undefined || run.status?.git?.branch === target.branch),
  );
}
