import type { PodTemplatePolicy } from '../shared/pod-template-check.js';
import { Reasons, type IssueRun, type Workflow } from '../../api/index.js';
import type { KubeClient } from '../runtime/client.js';
import { PODS, isNotFound, resourcePath } from '../runtime/client.js';
import { exponentialDelay } from '../runtime/backoff.js';
import type { Informer } from '../runtime/informer.js';
import { LABEL_SLOT } from '../shared/constants.js';
import type { PodObject } from '../shared/resources.js';
import { isActiveState } from '../../workflow/states.js';
import type { CreateFailure } from './create.js';
import { ensureRunObjects, startOf, type EnsureResult } from './ensure.js';
import type { PodExpectations } from './expectations.js';
import { POD_STARTING } from './pod-status.js';
import { decideBranch, decidedBranch } from './git-branch.js';
import { planSsh } from './ssh-placement.js';
import { waitingOutcome, type RetryPlan } from './retry.js';
import type { SlotView } from './status.js';
import type { RunnableWorkflow } from '../shared/config-snapshot.js';
import { reviewConfigOf } from '../shared/review-config.js';
import { roundInputs } from './review-inputs.js';
import type { BudgetFor } from './attempt-budget.js';

/** Retries of a refused create: 1 s, 2 s, 4 s, … up to 5 minutes. */
export const CREATE_RETRY_BASE_MS = 1000;
export const CREATE_RETRY_MAX_MS = 300_000;

/** How long to wait after the n-th refused create in a row (from 0), for this refusal. */
export const createRetryDelay = (failures: number, failure: CreateFailure): number =>
  exponentialDelay(
    failures,
    CREATE_RETRY_BASE_MS,
    Math.min(CREATE_RETRY_MAX_MS, failure.maxRetryMs ?? CREATE_RETRY_MAX_MS),
  );

/** The retry backoff cap when the Workflow's configuration cannot be read (its default). */
export const DEFAULT_RETRY_BACKOFF_CAP_MS = 300_000;

export const isLive = (pod: PodObject): boolean =>
  pod.status?.phase === 'Running' || pod.status?.phase === 'Pending';

const podSlot = (pod: PodObject): number => Number(pod.metadata?.labels?.[LABEL_SLOT] ?? 0);

export async function deleteRunPod(client: KubeClient, pod: PodObject): Promise<void> {
  try {
    await client.request({
      method: 'DELETE',
      path: resourcePath(PODS, pod.metadata?.namespace, pod.metadata?.name),
    });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/**
 * The hosts to move away from: a slot whose attempt failed ssh_connect on the host its status
 * records tries another one next (worker-host.ts).
 */
export function failedHosts(run: IssueRun, plan: RetryPlan): Map<number, string> {
  const avoid = new Map<number, string>();
  for (const view of plan.views) {
    if (view.outcome?.reason !== Reasons.SshConnectFailed) continue;
    const entry = run.status?.slots?.find(
      (slot) => slot.slot === view.slot && slot.attempt === view.attempt,
    );
    if (entry?.host !== undefined) avoid.set(view.slot, entry.host);
  }
  return avoid;
}

export interface AttemptDeps {
  client: KubeClient;
  workflows: Informer<Workflow>;
  loadWorkflowConfig: (namespace: string, configMap: string) => Promise<RunnableWorkflow>;
  operatorImage: string;
  podTemplatePolicy?: PodTemplatePolicy | undefined;
  now: () => Date;
  expectations: PodExpectations;
  /** Refused creates in a row, per run uid: the retry delay grows with them. */
  createRetries: Map<string, number>;
  /** The agent-tools gateway URL run Pods use; absent: no tools. */
  toolsUrl?: string | undefined;
  /** The runs of a namespace, as fresh as the controller knows them (SSH host load). */
  runs: (namespace: string) => IssueRun[];
  /** Records the SSH workers of an attempt's slots in the status; the run as it now stands. */
  storeHosts: (
    run: IssueRun,
    attempt: number,
    hosts: ReadonlyMap<number, string>,
  ) => Promise<IssueRun>;
  /** The attempt's budget (shared/run-budget.ts); absent: none. */
  budgetFor?: BudgetFor | undefined;
}

export interface StartedAttempts {
  views: SlotView[];
  /** When a refused start is tried again (ms since epoch). */
  retryAt?: number;
  /** The inputs of the last attempt started, for the status. */
  created?: { configDigest: string; inputsConfigMap: string; branch?: string | undefined };
}

/**
 * Starting a slot's next attempt (the I/O behind retry.ts's plan): the Workflow's backoff
 * cap, then for each due attempt its inputs and Pods, created as the first attempt's are.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export function createAttemptStarter(deps: AttemptDeps) {
  const workflowOf = (run: IssueRun) =>
    deps.workflows.get(run.metadata.namespace, run.spec.workflowRef.name);

  /**
   * What the retry policy needs from the Workflow's configuration: the backoff cap
   * (agent.max_retry_backoff_ms) and whether the run's issue is in an active state. A run
   * that neither retries nor continues needs neither.
   */
  async function policyInputs(
    run: IssueRun,
  ): Promise<{ capMs: number; issueActive: boolean; reviewing: boolean }> {
    const fallback = { capMs: DEFAULT_RETRY_BACKOFF_CAP_MS, issueActive: false, reviewing: false };
    const snapshot = workflowOf(run)?.status?.lastGoodConfigMap;
    // Snapshots are parsed once (config-snapshot.ts): reading `review:` costs no request.
    if (!snapshot) return fallback;
    try {
      const { config } = (await deps.loadWorkflowConfig(run.metadata.namespace ?? '', snapshot))
        .loaded;
      return {
        capMs: config.agent.maxRetryBackoffMs,
        issueActive: isActiveState(run.spec.issue.state ?? null, config.tracker),
        reviewing: reviewConfigOf(config) !== null,
      };
    } catch {
      return fallback;
    }
  }

  async function ensureAttempt(
    run: IssueRun,
    pods: readonly PodObject[],
    attempt: number,
    slots: readonly number[],
    avoid: ReadonlyMap<number, string>,
  ): Promise<EnsureResult & { branch?: string | undefined }> {
    const workflow = workflowOf(run);
    const snapshot = workflow?.status?.lastGoodConfigMap;
    if (!workflow || !snapshot) {
      const message = `Workflow ${run.spec.workflowRef.name} is missing or has no valid configuration`;
      return { ok: false, final: false, reason: Reasons.WorkflowInvalid, message };
    }
    const runnable = await deps.loadWorkflowConfig(run.metadata.namespace ?? '', snapshot);
    // A later attempt works on the branch the status keeps, whatever the issue or the
    // template say now (git-branch.ts); one that has none yet (the Workflow took up
    // workspace.git since) works it out, and the status keeps that one.
    const decision = decideBranch(runnable.loaded.config.workspace.git, run);
    if (decision.kind === 'unresolved') {
      return { ok: false, final: false, reason: decision.reason, message: decision.message };
    }
    const branch = decidedBranch(decision);
    const ssh = await planSsh({
      client: deps.client,
      workflow,
      config: runnable.loaded.config,
      run,
      slots: slots.map((slot) => ({ slot, attempt, avoid: avoid.get(slot) })),
      runs: () => deps.runs(run.metadata.namespace ?? ''),
    });
    if (ssh.kind === 'wait' || ssh.kind === 'fail') {
      return { ok: false, final: false, reason: ssh.reason, message: ssh.message };
    }
    // The hosts go into the status before the Pods (ssh-placement.ts).
    if (ssh.kind === 'ready' && ssh.fresh.length > 0) {
      await deps.storeHosts(run, attempt, ssh.hosts);
    }
    const review = await roundInputs(deps.client, run, attempt, runnable.loaded.config);
    if (review && !review.ok) return review;
    const ensured = await ensureRunObjects({
      ...startOf(deps, run, workflow, runnable, ssh),
      existingPods: new Set(pods.map((pod) => pod.metadata?.name ?? '')),
      retry: { attempt, slots },
      review: review?.review,
      branch,
    });
    return decision.kind === 'new' ? { ...ensured, branch } : ensured;
  }

  /**
   * Creates the Pods of the attempts the plan says are due. A slot whose next attempt cannot
   * be created yet keeps waiting, saying why, and is tried again later.
   */
  async function startDue(
    run: IssueRun,
    pods: readonly PodObject[],
    plan: RetryPlan,
  ): Promise<StartedAttempts> {
    const uid = run.metadata.uid ?? '';
    const started: StartedAttempts = { views: plan.views };
    for (const [attempt, slots] of plan.due) {
      // A Pod given up on while still alive (an image never pulled) goes before its successor.
      const stale = pods.filter(
        (pod) => slots.includes(podSlot(pod)) && isLive(pod) && !pod.metadata?.deletionTimestamp,
      );
      await Promise.all(stale.map((pod) => deleteRunPod(deps.client, pod)));
      const ensured = await ensureAttempt(run, pods, attempt, slots, failedHosts(run, plan));
      if (!ensured.ok) {
        const failures = deps.createRetries.get(uid) ?? 0;
        deps.createRetries.set(uid, failures + 1);
        const at = deps.now().getTime() + createRetryDelay(failures, ensured);
        started.retryAt = Math.min(started.retryAt ?? Infinity, at);
        const message = `attempt ${attempt} cannot start yet (${ensured.reason}: ${ensured.message})`;
        started.views = started.views.map((view) =>
          slots.includes(view.slot) && view.outcome
            ? {
                ...view,
                outcome: { ...waitingOutcome(view.outcome, view.attempt, new Date(at)), message },
              }
            : view,
        );
        continue;
      }
      deps.createRetries.delete(uid);
      const names = ensured.slots.map((entry) => entry.podName);
      deps.expectations.expect(uid, names, deps.now().getTime());
      started.created = {
        configDigest: ensured.configDigest,
        inputsConfigMap: ensured.inputsConfigMap,
        branch: ensured.branch,
      };
      started.views = started.views.map((view) => {
        const fresh = ensured.slots.find((entry) => entry.slot === view.slot);
        return fresh ? { ...fresh, outcome: POD_STARTING } : view;
      });
    }
    return started;
  }

  return { policyInputs, startDue };
}
