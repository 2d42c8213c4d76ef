import type { Logger } from 'pino';
import type { IssueRun } from '../../api/index.js';
import { runWatcherDeps } from '../events/run-watcher-deps.js';
import { ISSUERUNS } from '../shared/resources.js';
import type { KubeClient } from '../runtime/client.js';
import { resourcePath } from '../runtime/client.js';
import { objectKey } from '../runtime/informer.js';
import type { Manager } from '../runtime/manager.js';
import { jsonEqual } from '../shared/status-writer.js';
import type { TrackerCache } from '../shared/trackers.js';
import { runsOfWake, type WakeBoard, type WakeTarget } from '../shared/wake.js';
import { createInboxReconciler, type ApprovalsKnown, type InboxStatusStore } from './reconciler.js';
import { requestAnnotations, runFinished, steeredMark } from './requests.js';

export interface InboxControllerOptions {
  client: KubeClient;
  identity: string;
  logger: Logger;
  /** The IssueRun status store, shared with the IssueRun controller (status-store.ts). */
  store: InboxStatusStore;
  trackers: TrackerCache;
  /** Webhook wakes (docs/webhooks.md); polling alone without it. */
  wakes?: WakeBoard | undefined;
}

/** Few at once: each look is one comment list of the tracker, and idle runs cost none. */
const CONCURRENCY = 4;

type Known = (namespace: string | undefined, workflow: string) => ApprovalsKnown | undefined;

const running = (run: IssueRun): boolean => run.status?.phase === 'Running' && !runFinished(run);

/** A running run may be steered unless its Workflow is known not to steer. */
function mayBeSteered(run: IssueRun, known: Known): boolean {
  const approvals = known(run.metadata.namespace, run.spec.workflowRef.name);
  return running(run) && (approvals === undefined || approvals?.steering === true);
}

/**
 * Whether a change of the run is the inbox's business (cheap, no config read): a request
 * left by the gateway, one pending, new spec.decisions, a running run that may be steered,
 * or a run that just ended with steers no slot took.
 */
export function wantsLook(run: IssueRun, old: IssueRun | undefined, known: Known): boolean {
  if (run.metadata.deletionTimestamp) return false;
  const inbox = run.status?.inbox;
  if (requestAnnotations(run).length > 0 || (inbox?.pending ?? []).length > 0) return true;
  const decisions = run.spec.decisions ?? [];
  if (decisions.length > 0 && !jsonEqual(decisions, old?.spec.decisions ?? [])) return true;
  if (mayBeSteered(run, known)) return true;
  const ended = runFinished(run) && (old === undefined || !runFinished(old));
  return ended && (inbox?.steers ?? []).some((steer) => steer.seq > steeredMark(run));
}

/** The runs a `poll` wake (a tracker webhook) is for: the Workflow's runs that listen. */
export function runsToWake(runs: readonly IssueRun[], target: WakeTarget, known: Known): string[] {
  if (target.kind !== 'poll') return [];
  return runsOfWake(
    runs,
    target,
    (run) =>
      !run.metadata.deletionTimestamp &&
      ((run.status?.inbox?.pending ?? []).length > 0 || mayBeSteered(run, known)),
  );
}

/**
 * The inbox controller with what it watches (docs/approvals.md): IssueRuns (wantsLook), the
 * Workflows (a changed one is looked up again), and the WakeBoard's `poll` wakes, which make
 * the Workflow's listening runs read their issue at once.
 */
export function setupInboxController(manager: Manager, options: InboxControllerOptions): void {
  const { client } = options;
  const deps = runWatcherDeps(manager, options);
  const { issueRuns, workflows } = deps;
  const inbox = createInboxReconciler({
    ...deps,
    patchRun: async (namespace, name, patch) => {
      await client.request({
        method: 'PATCH',
        path: resourcePath(ISSUERUNS, namespace, name),
        body: patch,
        patchType: 'merge',
      });
    },
  });
  const controller = manager.controller({
    name: 'inbox',
    concurrency: CONCURRENCY,
    reconcile: inbox.reconcile,
  });
  const known: Known = (namespace, workflow) => inbox.approvalsOf(namespace, workflow);
  issueRuns.onAdd((run) => {
    if (wantsLook(run, undefined, known)) controller.enqueue(objectKey(run));
  });
  issueRuns.onUpdate((old, run) => {
    if (wantsLook(run, old, known)) controller.enqueue(objectKey(run));
  });
  // A new config snapshot may turn approvals or steering on or off: looked up again.
  workflows.onUpdate((old, workflow) => {
    if (old.status?.lastGoodConfigMap !== workflow.status?.lastGoodConfigMap) {
      inbox.forgetWorkflow(workflow.metadata.namespace, workflow.metadata.name ?? '');
    }
  });
  options.wakes?.subscribe('poll', (target) => {
    for (const key of runsToWake(issueRuns.list(target.namespace), target, known)) {
      inbox.wake(key);
      controller.enqueue(key);
    }
  });
}
