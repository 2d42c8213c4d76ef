import { awaitingReview, reviewConfigOf } from '../shared/review-config.js';
import type { Logger } from 'pino';
import {
  API_VERSION,
  FINISHED,
  WORKFLOW_KIND,
  findCondition,
  rfc3339,
  type IssueRun,
  type Workflow,
  type WorkflowDispatch,
} from '../../api/index.js';
import { planDispatch, type HeldIssue } from '../../dispatch/policy.js';
import type { TrackerAdapter } from '../../tracker/index.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import { errorMessage, isLorenzError } from '../../workflow/errors.js';
import type { Issue } from '../../workflow/issue.js';
import { isActiveState } from '../../workflow/states.js';
import { ensembleSize } from '../../workspace/ensemble.js';
import type { KubeClient } from '../runtime/client.js';
import { isConflict, isNotFound, resourcePath } from '../runtime/client.js';
import type { Informer } from '../runtime/informer.js';
import {
  ANNOTATION_ISSUE_ID,
  ANNOTATION_STOP_NOTE,
  LABEL_MANAGED_BY,
  LABEL_WORKFLOW,
  MANAGED_BY,
} from '../shared/constants.js';
import { dispatchedRunName, labelValue } from '../shared/object-names.js';
import { ISSUERUNS } from '../shared/resources.js';
import { BudgetReasons } from '../../api/budget.js';

/**
 * The tracker side of the Workflow reconciler (docs/design.md#dispatch-rules): each poll
 * refreshes the issues the Workflow holds (terminal → cancel and, once ended, remove with
 * the workspace; no longer active or gone → cancel; active → keep the state in step), then
 * asks the dispatch policy what to start and creates one IssueRun per issue. Everything it
 * remembers is in the cluster: the runs (labelled, owned by the Workflow) and
 * status.dispatch, so a restarted or new leader resumes the schedule.
 */

export interface PollDeps {
  client: KubeClient;
  issueRuns: Informer<IssueRun>;
  now: () => Date;
  /**
   * The Workflow's adapter (its key and board resolved). Adapters keep state between polls
   * (GitHub's ETags, the memory board's writes), so the reconciler hands in a cached one.
   */
  trackerFor: (workflow: Workflow, config: WorkflowConfig) => Promise<TrackerAdapter>;
  logger?: Logger;
  /** Finalizers the runs are created with (the archive's, while it is on). */
  runFinalizers?: readonly string[];
}

export interface PollResult {
  dispatch: WorkflowDispatch;
  /** Whether the tracker answered; undefined when no poll was due. */
  reachable?: { ok: true } | { ok: false; reason: string; message: string };
  /** When to poll next, from now. */
  requeueAfterMs: number;
}

/**
 * How soon the tracker is polled again when an issue could not be dispatched because the
 * run of that name is still being removed: its objects go first (foreground deletion), then
 * its name is free, usually within a few seconds, well before the next poll interval.
 */
export const NAME_FREED_RETRY_MS = 1000;

const isFinished = (run: IssueRun): boolean =>
  findCondition(run.status?.conditions, FINISHED)?.status === 'True';

/** The issue id a dispatched run holds (its annotation), else its identifier. */
const heldId = (run: IssueRun): string =>
  run.metadata.annotations?.[ANNOTATION_ISSUE_ID] ?? run.spec.issue.identifier;

/** The runs this Workflow dispatched: owned by it (hand-made runs are left alone). */
export function dispatchedRuns(runs: readonly IssueRun[], workflow: Workflow): IssueRun[] {
  return runs.filter((run) =>
    (run.metadata.ownerReferences ?? []).some((owner) => owner.uid === workflow.metadata.uid),
  );
}

/** The IssueRun the dispatcher creates for an issue. */
export function dispatchedRun(workflow: Workflow, issue: Issue): IssueRun {
  const name = workflow.metadata.name ?? '';
  return {
    apiVersion: API_VERSION,
    kind: 'IssueRun',
    metadata: {
      name: dispatchedRunName(name, issue.identifier),
      namespace: workflow.metadata.namespace,
      labels: { [LABEL_WORKFLOW]: labelValue(name), [LABEL_MANAGED_BY]: MANAGED_BY },
      annotations: { [ANNOTATION_ISSUE_ID]: issue.id ?? issue.identifier },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: WORKFLOW_KIND,
          name,
          uid: workflow.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      workflowRef: { name },
      issue: { ...issue, assigned_to_worker: issue.assigned_to_worker },
      continueWhileActive: true,
    },
  };
}

// eslint-disable-next-line max-lines-per-function -- one poll in order (fetch, reconcile running, dispatch); each step exits early
export async function pollWorkflow(
  workflow: Workflow,
  config: WorkflowConfig,
  current: WorkflowDispatch | undefined,
  deps: PollDeps,
  /** The first poll since the controller started: also clean up after terminal issues. */
  startup = false,
  /** The Workflow's day budget is spent (daily-spend.ts): nothing new is dispatched. */
  budgetSpent = false,
): Promise<PollResult> {
  const now = deps.now();
  const interval = config.polling.intervalMs;
  const next = current?.nextPollTime ? Date.parse(current.nextPollTime) : Number.NaN;
  if (Number.isFinite(next) && next > now.getTime()) {
    return { dispatch: current ?? {}, requeueAfterMs: next - now.getTime() };
  }
  const namespace = workflow.metadata.namespace ?? '';
  const runs = dispatchedRuns(deps.issueRuns.list(namespace), workflow);
  const base: WorkflowDispatch = {
    trackerKind: config.tracker.kind,
    lastPollTime: rfc3339(now),
    nextPollTime: rfc3339(new Date(now.getTime() + interval)),
  };
  const failed = (error: unknown): PollResult => {
    const reason = isLorenzError(error) ? error.code : 'tracker_request';
    const message = errorMessage(error);
    deps.logger?.warn({ workflow: workflow.metadata.name, err: message }, 'tracker poll failed');
    return {
      dispatch: { ...current, ...base, lastError: message },
      reachable: { ok: false, reason, message },
      requeueAfterMs: interval,
    };
  };
  let tracker: TrackerAdapter;
  let candidates: Issue[];
  let refreshed: Issue[];
  let terminal = new Set<string>();
  try {
    tracker = await deps.trackerFor(workflow, config);
    const held = runs.filter((run) => !isFinished(run));
    refreshed = held.length > 0 ? await tracker.fetchByIds(held.map(heldId)) : [];
    candidates = await tracker.fetchCandidates();
    // At start-up, finished runs of issues that have since ended terminal go with their
    // workspaces (their stored state may predate the end).
    if (startup && runs.some(isFinished)) {
      const ended = await tracker.fetchByStates(config.tracker.terminalStates);
      terminal = new Set(ended.map((issue) => issue.id ?? issue.identifier));
    }
  } catch (error) {
    // A tracker that is down leaves every run as it is.
    return failed(error);
  }

  const actions = new RunActions(deps.client, namespace, deps.runFinalizers ?? []);
  const byId = new Map(refreshed.map((issue) => [issue.id ?? issue.identifier, issue]));
  const candidateIds = new Set(candidates.map((issue) => issue.id ?? issue.identifier));
  const held: HeldIssue[] = [];
  /** Names of runs on their way out: a create under one of them waits for it to go. */
  const leaving = new Set(
    runs.filter((run) => run.metadata.deletionTimestamp).map((run) => run.metadata.name),
  );
  for (const run of runs) {
    const id = heldId(run);
    if (isFinished(run)) {
      // Its issue is back among the candidates (reopened, moved back to Todo), or it ended
      // terminal: the old run goes, with its workspace; a later poll starts afresh.
      const state = run.spec.issue.state ?? null;
      const ended = terminal.has(id) || isTerminal(state, config);
      // Stopped by a budget: it keeps its issue (a new run would spend again) until the
      // issue ends or someone deletes the run.
      const budgetStopped = run.status?.reason === BudgetReasons.BudgetExceeded;
      if ((candidateIds.has(id) && !budgetStopped) || ended) {
        await actions.remove(run);
        leaving.add(run.metadata.name);
      } else held.push({ issueId: id, state, slots: 0 });
      continue;
    }
    const issue = byId.get(id);
    // A run waiting for the review of its pull request holds its issue but runs no agent:
    // it takes no slot, and its issue may leave the active states (In Review) and stay its.
    const reviewing = awaitingReview(run);
    const slots = reviewing
      ? 0
      : (run.status?.slots?.length ??
        ensembleSize({ labels: run.spec.issue.labels ?? [] }, config.agent.ensembleSize));
    held.push({ issueId: id, state: issue?.state ?? run.spec.issue.state ?? null, slots });
    if (run.spec.cancelRequested) continue;
    // Under review, an issue moved out of the active states (In Review) does not stop the
    // attempt: it ends on its own and the run waits for the review; a terminal one still does.
    const underReview = reviewing || reviewConfigOf(config) !== null;
    const waitsForReview = underReview && issue !== undefined && !isTerminal(issue.state, config);
    if (waitsForReview) {
      if (issue.state !== run.spec.issue.state) await actions.setState(run, issue.state);
    } else if (!issue || !isActiveState(issue.state, config.tracker)) {
      // Terminal, no longer active, or gone from the tracker: stop (after_run still runs),
      // saying what was seen; the state goes in the same write, so the run's end reads it.
      await actions.cancel(run, stopNote(run, issue, config), issue?.state);
    } else if (issue.state !== run.spec.issue.state) {
      await actions.setState(run, issue.state);
    }
  }

  let dispatched = 0;
  let waitingForName = false;
  if (budgetSpent) base.budgetSpent = true;
  if (!workflow.spec.suspend && !budgetSpent) {
    const entries = planDispatch(candidates, held, {
      activeStates: config.tracker.activeStates,
      terminalStates: config.tracker.terminalStates,
      maxConcurrentAgents: config.agent.maxConcurrentAgents,
      maxConcurrentAgentsByState: config.agent.maxConcurrentAgentsByState,
      ensembleSize: config.agent.ensembleSize,
    });
    for (const entry of entries) {
      if (entry.decision.kind !== 'dispatch') continue;
      const run = dispatchedRun(workflow, entry.issue);
      if (await actions.create(run)) dispatched += 1;
      // The run of that name is still being removed: a poll soon creates it.
      else if (leaving.has(run.metadata.name)) waitingForName = true;
    }
    const blocked = entries.flatMap((entry) =>
      entry.decision.kind === 'blocked'
        ? [{ identifier: entry.issue.identifier, by: entry.decision.by }]
        : [],
    );
    base.blocked = blocked.slice(0, 50);
    base.overCap = entries.filter((entry) => entry.decision.kind === 'over-cap').length;
  }
  const after = waitingForName ? Math.min(interval, NAME_FREED_RETRY_MS) : interval;
  base.nextPollTime = rfc3339(new Date(now.getTime() + after));
  return {
    dispatch: {
      ...base,
      candidates: candidates.length,
      dispatched,
      running: held.filter((entry) => entry.slots > 0).length + dispatched,
    },
    reachable: { ok: true },
    requeueAfterMs: after,
  };
}

/**
 * What the dispatcher saw that stops a run, for its Cancelled message: where its issue went.
 * No tracker adapter reports who changed an issue's state, so the note says so.
 */
export function stopNote(run: IssueRun, issue: Issue | undefined, config: WorkflowConfig): string {
  const identifier = run.spec.issue.identifier;
  if (!issue) {
    return `${identifier} is gone from the ${config.tracker.kind} tracker (deleted, or out of the Workflow's scope)`;
  }
  const where = isTerminal(issue.state, config) ? 'a terminal state' : 'out of the active states';
  return `${identifier} moved to ${issue.state ?? 'no state'} (${where}) while the run worked on it; the ${config.tracker.kind} tracker does not say who moved it`;
}

function isTerminal(state: string | null, config: WorkflowConfig): boolean {
  const key = (state ?? '').trim().toLowerCase();
  return config.tracker.terminalStates.some((entry) => entry.trim().toLowerCase() === key);
}

/** The writes a poll makes to IssueRuns; a run already gone or already there is no error. */
class RunActions {
  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly finalizers: readonly string[],
  ) {}

  private path(name?: string): string {
    return resourcePath(ISSUERUNS, this.namespace, name);
  }

  async create(run: IssueRun): Promise<boolean> {
    try {
      // In the create itself: the archive's finalizer costs no write of its own.
      const body: IssueRun =
        this.finalizers.length === 0
          ? run
          : { ...run, metadata: { ...run.metadata, finalizers: [...this.finalizers] } };
      await this.client.request({ method: 'POST', path: this.path(), body });
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  /** Stops the run, with the note its Cancelled message quotes and the issue's new state. */
  async cancel(run: IssueRun, note: string, state: string | null | undefined): Promise<void> {
    const changed = state !== undefined && state !== run.spec.issue.state;
    await this.patch(run, {
      metadata: { annotations: { [ANNOTATION_STOP_NOTE]: note } },
      spec: { cancelRequested: true, ...(changed ? { issue: { state } } : {}) },
    });
  }

  async setState(run: IssueRun, state: string | null): Promise<void> {
    await this.patch(run, { spec: { issue: { state } } });
  }

  /**
   * Foreground: the run's name stays taken until its Pods, inputs and Secrets are gone, so
   * the run dispatched afresh under it never meets its predecessor's objects.
   */
  async remove(run: IssueRun): Promise<void> {
    try {
      await this.client.request({
        method: 'DELETE',
        path: this.path(run.metadata.name),
        body: { propagationPolicy: 'Foreground' },
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  private async patch(run: IssueRun, body: object): Promise<void> {
    try {
      await this.client.request({
        method: 'PATCH',
        path: this.path(run.metadata.name),
        patchType: 'merge',
        body,
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
