import { workspaceStartText } from '../api/workspace-source.js';
import type { AttemptRecord, EventRecord, RunRecord } from '../archive/types.js';
import { awaitingOf } from './inbox-view.js';
import { get, given, isRecord, num, records, str, type Json } from './json.js';
import type {
  AttemptView,
  ConditionView,
  EventView,
  HookView,
  IssueView,
  RunSummary,
  TokenCounts,
  WorkflowSummary,
} from './view-api.js';

/**
 * Kubernetes objects (as the watch cache holds them: raw JSON) and archive records mapped to
 * the view API's shapes. Pure, and defensive: a field of the wrong type is left out, never
 * passed through (the browser gets what view-api.ts promises and nothing else).
 */

const TRACKER_REACHABLE = 'TrackerReachable';
const ZERO: TokenCounts = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

function usageOf(value: unknown): TokenCounts {
  if (!isRecord(value)) return { ...ZERO };
  return {
    inputTokens: num(value.inputTokens) ?? 0,
    outputTokens: num(value.outputTokens) ?? 0,
    totalTokens: num(value.totalTokens) ?? 0,
  };
}

/** Only http(s) links reach the page: a `javascript:` URL in an issue is dropped. */
export function safeUrl(value: unknown): string | undefined {
  const text = str(value);
  if (!text) return undefined;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

export function conditionsOf(value: unknown): ConditionView[] {
  return records(value).flatMap((each) => {
    const type = str(each.type);
    const status = str(each.status);
    if (!type || (status !== 'True' && status !== 'False' && status !== 'Unknown')) return [];
    const fields = {
      reason: str(each.reason),
      message: str(each.message),
      lastTransitionTime: str(each.lastTransitionTime),
    };
    return [{ type, status, ...given(fields) }];
  });
}

/** A live IssueRun (raw JSON from the cache) as a row of /runs. */
export function runOfIssueRun(run: Json): RunSummary {
  const meta = get(run, 'metadata');
  const spec = get(run, 'spec');
  const status = get(run, 'status');
  const issue = get(spec, 'issue');
  const url = safeUrl(get(issue, 'url'));
  const state = str(get(issue, 'state'));
  const view: IssueView = {
    id: str(get(issue, 'id')) ?? '',
    identifier: str(get(issue, 'identifier')) ?? '',
    title: str(get(issue, 'title')) ?? '',
    ...(url ? { url } : {}),
    ...(state ? { state } : {}),
  };
  // A run whose agent waits on a person says so in its reason, as its waiting slot does.
  const awaiting = awaitingOf(run);
  const reason = awaiting?.reason ?? str(get(status, 'reason'));
  const message = str(get(status, 'message'));
  const startedAt = str(get(status, 'startTime'));
  const finishedAt = str(get(status, 'completionTime'));
  const branch = str(get(status, 'git', 'branch'));
  const workspace = workspaceStartText(get(status, 'workspaceSource'));
  const cancel = get(spec, 'cancelRequested') === true;
  return {
    uid: str(get(meta, 'uid')) ?? '',
    namespace: str(get(meta, 'namespace')) ?? '',
    name: str(get(meta, 'name')) ?? '',
    workflow: str(get(spec, 'workflowRef', 'name')) ?? '',
    issue: view,
    phase: str(get(status, 'phase')) ?? 'Pending',
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    attempt: num(get(status, 'attempt')) ?? num(get(spec, 'attempt')) ?? 1,
    createdAt: str(get(meta, 'creationTimestamp')) ?? '',
    ...(startedAt ? { startedAt } : {}),
    ...(finishedAt ? { finishedAt } : {}),
    ...(branch ? { branch } : {}),
    ...(workspace ? { workspace } : {}),
    usage: usageOf(get(status, 'usage')),
    source: 'live',
    ...(cancel ? { cancelRequested: true } : {}),
    ...(awaiting?.count ? { awaiting: awaiting.count } : {}),
  };
}

/** An archived run as a row of /runs. */
export function runOfRecord(run: RunRecord): RunSummary {
  const url = safeUrl(run.issueUrl);
  const cancel = get(run.object, 'spec', 'cancelRequested') === true;
  const workspace = workspaceStartText(get(run.object, 'status', 'workspaceSource'));
  return {
    uid: run.uid,
    namespace: run.namespace,
    name: run.name,
    workflow: run.workflow,
    issue: {
      id: run.issueId,
      identifier: run.issueIdentifier,
      title: run.issueTitle,
      ...(url ? { url } : {}),
      ...(run.issueState ? { state: run.issueState } : {}),
    },
    phase: run.phase,
    ...(run.reason ? { reason: run.reason } : {}),
    ...(run.message ? { message: run.message } : {}),
    attempt: run.attempts,
    createdAt: run.createdAt,
    ...(run.startedAt ? { startedAt: run.startedAt } : {}),
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
    ...(run.branch ? { branch: run.branch } : {}),
    ...(workspace ? { workspace } : {}),
    usage: { ...run.usage },
    source: 'archive',
    ...(run.deletedAt ? { deletedAt: run.deletedAt } : {}),
    ...(cancel ? { cancelRequested: true } : {}),
  };
}

/**
 * A Workflow (raw JSON) as the overview shows it, from what the controller's poller writes in
 * status.dispatch and the TrackerReachable condition; `running` counts the live runs of it
 * that are not finished (the caller's cache knows them), `awaiting` those of them whose agent
 * waits on a person.
 */
export function workflowOf(workflow: Json, running: number, awaiting = 0): WorkflowSummary {
  const meta = get(workflow, 'metadata');
  const status = get(workflow, 'status');
  const dispatch = get(status, 'dispatch');
  const conditions = conditionsOf(get(status, 'conditions'));
  const tracker = conditions.find((each) => each.type === TRACKER_REACHABLE);
  const lastPollTime = str(get(dispatch, 'lastPollTime'));
  const lastError = str(get(dispatch, 'lastError'));
  const candidates = num(get(dispatch, 'candidates'));
  const overCap = num(get(dispatch, 'overCap'));
  const blockedBy = new Map<string, number>();
  for (const each of records(get(dispatch, 'blocked'))) {
    const by = Array.isArray(each.by) ? each.by.filter((x) => typeof x === 'string') : [];
    const reason = by.length > 0 ? `blocked by ${by.join(', ')}` : 'blocked';
    blockedBy.set(reason, (blockedBy.get(reason) ?? 0) + 1);
  }
  const blocked = [...blockedBy].map(([reason, count]) => ({ reason, count }));
  if (overCap) blocked.push({ reason: 'over the concurrency cap', count: overCap });
  return {
    namespace: str(get(meta, 'namespace')) ?? '',
    name: str(get(meta, 'name')) ?? '',
    uid: str(get(meta, 'uid')) ?? '',
    suspended: get(workflow, 'spec', 'suspend') === true,
    tracker: {
      kind: str(get(dispatch, 'trackerKind')) ?? '',
      ...(tracker && tracker.status !== 'Unknown' ? { reachable: tracker.status === 'True' } : {}),
      ...(lastPollTime ? { lastPollTime } : {}),
      ...(lastError ? { lastError } : {}),
    },
    ...(candidates === undefined ? {} : { candidates }),
    running: num(get(dispatch, 'running')) ?? running,
    ...(awaiting > 0 ? { awaiting } : {}),
    blocked,
    ...(overCap === undefined ? {} : { overCap }),
    conditions,
  };
}

function hookOf(hook: Json, seq?: number): HookView {
  const exitCode = num(hook.exitCode);
  const durationMs = num(hook.durationMs);
  const output = str(hook.output);
  const startedAt = str(hook.startedAt);
  return {
    ...(seq === undefined ? {} : { seq }),
    hookName: str(hook.hookName) ?? str(hook.name) ?? '',
    status: str(hook.status) ?? '',
    ...(exitCode === undefined ? {} : { exitCode }),
    ...(startedAt ? { startedAt } : {}),
    ...(durationMs === undefined ? {} : { durationMs }),
    ...(output ? { output } : {}),
    ...(hook.outputTruncated === true ? { outputTruncated: true } : {}),
  };
}

/**
 * Hook records of one attempt with their hook_output seq: the nth `started` record of the
 * Pod's log is seq n, and its completed/failed record follows it; only the ended records are
 * shown (one per hook run).
 */
export function hooksOf(hooks: readonly Json[]): HookView[] {
  const views: HookView[] = [];
  const open = new Map<string, number>();
  let started = 0;
  for (const hook of hooks) {
    const name = str(hook.hookName) ?? str(hook.name) ?? '';
    if (hook.status === 'started') {
      open.set(name, started++);
      continue;
    }
    const seq = open.get(name);
    open.delete(name);
    views.push(hookOf(hook, seq));
  }
  for (const [name, seq] of open) views.push({ seq, hookName: name, status: 'started' });
  return views;
}

export function attemptOfRecord(attempt: AttemptRecord): AttemptView {
  return {
    slot: attempt.slot,
    attempt: attempt.attempt,
    podName: attempt.podName,
    ...(attempt.node ? { node: attempt.node } : {}),
    ...(attempt.host ? { host: attempt.host } : {}),
    ...(attempt.image ? { image: attempt.image } : {}),
    phase: attempt.phase,
    ...(attempt.reason ? { reason: attempt.reason } : {}),
    ...(attempt.message ? { message: attempt.message } : {}),
    ...(attempt.startedAt ? { startedAt: attempt.startedAt } : {}),
    ...(attempt.finishedAt ? { finishedAt: attempt.finishedAt } : {}),
    turns: attempt.turns,
    usage: { ...attempt.usage },
    hooks: hooksOf(attempt.hooks.filter(isRecord)),
    ...(attempt.git ? { git: attempt.git } : {}),
  };
}

export function eventOfRecord(event: EventRecord): EventView {
  return {
    involvedKind: event.involvedKind,
    involvedName: event.involvedName,
    type: event.type,
    reason: event.reason,
    message: event.message,
    count: event.count,
    ...(event.firstTime ? { firstTime: event.firstTime } : {}),
    ...(event.lastTime ? { lastTime: event.lastTime } : {}),
  };
}

/** A core/v1 Event (raw JSON) of the run or one of its Pods. */
export function eventOfObject(event: Json): EventView {
  const firstTime = str(event.firstTimestamp) ?? str(event.eventTime);
  const lastTime =
    str(event.lastTimestamp) ??
    str(event.eventTime) ??
    str(get(event, 'metadata', 'creationTimestamp'));
  return {
    involvedKind: str(get(event, 'involvedObject', 'kind')) ?? '',
    involvedName: str(get(event, 'involvedObject', 'name')) ?? '',
    type: str(event.type) ?? '',
    reason: str(event.reason) ?? '',
    message: str(event.message) ?? '',
    count: num(event.count) ?? 1,
    ...(firstTime ? { firstTime } : {}),
    ...(lastTime ? { lastTime } : {}),
  };
}

/**
 * One attempt of a live run from its Pod (raw JSON) and the run's status: the Pod says where
 * and when, the slot status how it ended, the run's hook records (those of this slot) what
 * its hooks did.
 */
export function attemptOfPod(pod: Json, run: Json): AttemptView {
  const labels = get(pod, 'metadata', 'labels');
  const slot = Number(str(get(labels, 'lorenz.dev/slot')) ?? '0') || 0;
  const attempt = Number(str(get(labels, 'lorenz.dev/attempt')) ?? '1') || 1;
  const slotStatus = records(get(run, 'status', 'slots')).find((each) => each.slot === slot);
  const current = num(slotStatus?.attempt) === attempt;
  const agent = records(get(pod, 'status', 'containerStatuses')).find(
    (each) => each.name === 'agent',
  );
  const startedAt =
    str(get(agent, 'state', 'terminated', 'startedAt')) ??
    str(get(agent, 'state', 'running', 'startedAt')) ??
    str(get(pod, 'status', 'startTime'));
  const finishedAt = str(get(agent, 'state', 'terminated', 'finishedAt'));
  const node = str(get(pod, 'spec', 'nodeName'));
  const host = current ? str(slotStatus?.host) : undefined;
  const image = str(get(agent, 'image'));
  const reason = current ? str(slotStatus?.reason) : undefined;
  const message = current ? str(slotStatus?.message) : undefined;
  const hooks = current
    ? records(get(run, 'status', 'hooks')).filter((each) => (num(each.slot) ?? 0) === slot)
    : [];
  const branch = str(get(run, 'status', 'git', 'branch'));
  return {
    slot,
    attempt,
    podName: str(get(pod, 'metadata', 'name')) ?? '',
    ...(node ? { node } : {}),
    ...(host ? { host } : {}),
    ...(image ? { image } : {}),
    phase: str(get(pod, 'status', 'phase')) ?? 'Unknown',
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
    ...(startedAt ? { startedAt } : {}),
    ...(finishedAt ? { finishedAt } : {}),
    turns: current ? (num(slotStatus?.turns) ?? 0) : 0,
    usage: current ? usageOf(slotStatus?.usage) : { ...ZERO },
    hooks: hooks.map((hook, index) => ({ ...hookOf(hook), seq: index })),
    ...(branch ? { git: { branch } } : {}),
  };
}
