import { type InboxStatus, type IssueRun } from '../../api/index.js';
import type { TrackerComment, TrackerWriter } from '../../tracker/types.js';
import type { ApprovalsConfig } from '../../workflow/approvals-config.js';
import { errorMessage } from '../../workflow/errors.js';
import { exponentialDelay } from '../runtime/backoff.js';
import type { ReconcileResult } from '../runtime/controller.js';
import {
  type RunWatcherReconcilerDeps,
  type RunWatcherStore,
  currentRun,
} from '../events/run-watcher-deps.js';
import { createRunWatcherMarks } from '../events/run-watcher-marks.js';
import { ANNOTATION_ISSUE_ID, ANNOTATION_STOP_NOTE } from '../shared/constants.js';
import { postAll, recordPosts } from './act.js';
import { decideInbox } from './decide.js';
import { requestAnnotations, runFinished, timeOf } from './requests.js';
import { authorKey } from './self-authors.js';

/** What the inbox controller writes the run's status with: the store it shares (status-store.ts). */
export type InboxStatusStore = RunWatcherStore;

export interface InboxReconcilerDeps extends RunWatcherReconcilerDeps<InboxStatusStore> {
  /** A merge patch of the IssueRun (annotations recorded away, spec.cancelRequested). */
  patchRun: (namespace: string, name: string, patch: Record<string, unknown>) => Promise<void>;
}

/** Tracker and apiserver failures are tried again after 5 s, 10 s, … up to 5 minutes. */
export const INBOX_RETRY_BASE_MS = 5000;
export const INBOX_RETRY_MAX_MS = 300_000;
/** The soonest a look is asked for again (a deadline a few ms away waits this long). */
const MIN_REQUEUE_MS = 250;

/** What the controller knows of a Workflow's agent.approvals: none, or whether it steers. */
export type ApprovalsKnown = { steering: boolean } | null;

const issueIdOf = (run: IssueRun): string =>
  run.metadata.annotations?.[ANNOTATION_ISSUE_ID] ?? run.spec.issue.id ?? run.spec.issue.identifier;

const workflowKey = (namespace: string | undefined, name: string) => `${namespace ?? ''}/${name}`;

/** Whether the run has something new for the inbox: a request, or a decision on a pending one. */
function somethingNew(run: IssueRun): boolean {
  const pending = run.status?.inbox?.pending ?? [];
  return (
    requestAnnotations(run).length > 0 ||
    (run.spec.decisions ?? []).some((entry) => pending.some((p) => p.id === entry.requestId))
  );
}

/** While a request waits, or steering is on for a running run, the issue is read. */
function listening(run: IssueRun, config: ApprovalsConfig): boolean {
  if (runFinished(run)) return false;
  const pending = run.status?.inbox?.pending ?? [];
  return pending.length > 0 || (config.steering && run.status?.phase === 'Running');
}

/** When to look again: the next read or the next deadline, whichever comes first. */
function nextLook(run: IssueRun, inbox: InboxStatus, config: ApprovalsConfig, now: number) {
  const waits = (inbox.pending ?? []).length > 0;
  const steering = config.steering && run.status?.phase === 'Running' && !runFinished(run);
  if (!waits && !steering) return undefined;
  const read = timeOf(inbox.lastReadTime, now) + config.pollIntervalMs - now;
  return { requeueAfter: Math.max(MIN_REQUEUE_MS, Math.min(read, nextDeadline(inbox, now))) };
}

const nextDeadline = (inbox: InboxStatus, now: number): number =>
  Math.min(...(inbox.pending ?? []).map((p) => timeOf(p.deadline, Infinity) - now));

/**
 * The inbox controller, kubebuilder's ladder (docs/approvals.md): fetch → guards (the run
 * is there and not going, its Workflow has agent.approvals) → read the issue's comments when
 * due → decide (decide.ts) → post comments, Events, status through the shared store, then
 * the annotations recorded away and a /stop's cancel → requeue while anything waits. A
 * tracker that cannot be read is a status and a backoff; nothing is dropped.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createInboxReconciler(deps: InboxReconcilerDeps) {
  const marks = createRunWatcherMarks();
  const known = new Map<string, ApprovalsKnown>();
  /** Per Workflow, the author keys of the comments this controller posted (self-authors.ts). */
  const selves = new Map<string, Set<string>>();

  async function read(
    key: string,
    run: IssueRun,
    config: ApprovalsConfig,
    writerOf: () => Promise<TrackerWriter | undefined>,
  ): Promise<{ comments: TrackerComment[] | null; error: string | null }> {
    const idle = runFinished(run) || (!listening(run, config) && !somethingNew(run));
    if (idle) return { comments: null, error: null };
    const last = timeOf(run.status?.inbox?.lastReadTime, -Infinity);
    const due =
      marks.woken(key) || somethingNew(run) || deps.now().getTime() - last >= config.pollIntervalMs;
    if (!due) return { comments: null, error: null };
    const writer = await writerOf();
    if (!writer)
      return { comments: null, error: 'the tracker of this Workflow cannot read comments' };
    try {
      return { comments: await writer.listComments(issueIdOf(run)), error: null };
    } catch (error) {
      return { comments: null, error: errorMessage(error) };
    }
  }

  async function look(key: string, run: IssueRun): Promise<ReconcileResult> {
    const { namespace, name } = run.metadata;
    const workflow = deps.workflows.get(namespace, run.spec.workflowRef.name);
    const snapshot = workflow?.status?.lastGoodConfigMap;
    if (!workflow || !snapshot) return;
    const loaded = (await deps.loadWorkflowConfig(namespace ?? '', snapshot)).loaded.config;
    const config = loaded.agent.approvals;
    const wfKey = workflowKey(namespace, run.spec.workflowRef.name);
    known.set(wfKey, config ? { steering: config.steering } : null);
    if (!config) return;
    // The writer (its key read from a Secret) only for a look that reads or posts.
    let writer: Promise<TrackerWriter | undefined> | undefined;
    const writerOf = () => (writer ??= deps.trackerWriter(workflow, loaded));
    const { comments, error } = await read(key, run, config, writerOf);
    marks.wakeTaken(key);
    const now = deps.now();
    const self = selves.get(wfKey) ?? new Set<string>();
    const plan = decideInbox({ run, config, comments, self: [...self], now });
    const posts = plan.posts.length > 0 ? await writerOf() : undefined;
    const posted = await postAll(posts, issueIdOf(run), plan.posts, comments);
    for (const result of posted) {
      const author = result.comment ? authorKey(result.comment) : null;
      if (author && self.size < 16) selves.set(wfKey, self.add(author));
    }
    const recorded = recordPosts(run, plan.inbox, posted, now);
    const inbox = recorded.inbox;
    if (error !== null) {
      inbox.reason = 'TrackerUnavailable';
      inbox.message = `the issue's comments cannot be read: ${error}`.slice(0, 2048);
    }
    // Events before the status (as the IssueRun's are): a restart writes them again, as 409s.
    await deps.events?.([...plan.events, ...recorded.events]);
    await deps.store.update(key, run, (status) => ({ ...status, inbox }));
    // Only once the status holds them: an annotation removed first would lose its request.
    const annotations: Record<string, string | null> = {};
    for (const each of plan.removeAnnotations) annotations[each] = null;
    if (plan.cancel) annotations[ANNOTATION_STOP_NOTE] = plan.cancel.note;
    if (Object.keys(annotations).length > 0) {
      await deps.patchRun(namespace ?? '', name ?? '', {
        metadata: { annotations },
        ...(plan.cancel ? { spec: { cancelRequested: true } } : {}),
      });
    }
    const next = nextLook(run, inbox, config, now.getTime());
    if (error !== null && next) {
      const count = marks.failed(key);
      deps.logger?.warn({ run: key, err: error }, 'inbox: cannot read the issue; will try again');
      const backoff = exponentialDelay(count, INBOX_RETRY_BASE_MS, INBOX_RETRY_MAX_MS);
      // The backoff, not the poll interval (the read is overdue), unless a deadline comes first.
      const soonest = Math.min(backoff, nextDeadline(inbox, now.getTime()));
      return { requeueAfter: Math.max(MIN_REQUEUE_MS, soonest) };
    }
    marks.succeeded(key);
    return next;
  }

  async function reconcile(key: string): Promise<ReconcileResult> {
    const run = currentRun(deps, key);
    if (!run) return marks.forget(key);
    try {
      return await look(key, run);
    } catch (error) {
      const count = marks.failed(key);
      const message = `the inbox failed: ${errorMessage(error)}`.slice(0, 2048);
      deps.logger?.warn({ run: key, err: message }, 'inbox: will try again');
      await deps.store
        .update(key, run, (status) => ({
          ...status,
          inbox: { ...status.inbox, reason: 'InboxFailed', message },
        }))
        .catch(() => undefined);
      return { requeueAfter: exponentialDelay(count, INBOX_RETRY_BASE_MS, INBOX_RETRY_MAX_MS) };
    }
  }

  return {
    reconcile,
    /** A tracker webhook said "look now" (wake.ts): the next look reads the issue at once. */
    wake: marks.wake,
    /** What the last look learnt of the Workflow's agent.approvals (undefined: not looked yet). */
    approvalsOf(namespace: string | undefined, workflow: string): ApprovalsKnown | undefined {
      return known.get(workflowKey(namespace, workflow));
    },
    /** The Workflow changed: what was learnt of it is looked up again. */
    forgetWorkflow(namespace: string | undefined, workflow: string): void {
      known.delete(workflowKey(namespace, workflow));
    },
  };
}

export type InboxReconciler = ReturnType<typeof createInboxReconciler>;
