import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import {
  FINISHED,
  findCondition,
  type IssueRun,
  type IssueRunStatus,
  type Workflow,
} from '../../api/index.js';
import type { HookExecutionMessage, TokenUsage } from '../../workflow/events.js';

/**
 * The metrics users watch (runs ended, how long they and their hooks took, what runs now, the
 * tracker's polls, the agents' tokens), beside the runtime's in the manager's registry. Their
 * labels are bounded: namespaces, Workflow names, phases, reason codes, hook names; never an
 * issue, a run or a Pod. Every counter moves on a transition this controller makes (a status
 * write, an Event created, a log line read), not on a state it reads, so a re-reconcile or a
 * restarted controller does not count a run twice. docs/metrics.md lists them.
 */
export interface RunMetrics {
  /** A run's status was written: its end, when this write records it, is counted. */
  statusWritten: (
    run: IssueRun,
    previous: IssueRunStatus | undefined,
    next: IssueRunStatus,
  ) => void;
  /** A hook record's Event was created (not met again): its duration is observed. */
  hookRecorded: (workflow: string, message: HookExecutionMessage) => void;
  /**
   * A run Pod's log reported this cumulative usage; what grew since the last report of the same
   * Pod is counted.
   */
  tokensRead: (
    pod: { uid: string; namespace: string; workflow: string },
    usage: TokenUsage,
  ) => void;
  /**
   * This much of the Pod's usage was counted already (its run's status holds it: a controller
   * that meets the Pod anew, after a restart, counts only above it). Ignored once counting began.
   */
  tokensCounted: (uid: string, usage: TokenUsage) => void;
  /** The Pod is gone: its log is read no more, its count is dropped. */
  forgetPod: (uid: string) => void;
  /** A due tracker poll of the Workflow ended so. */
  polled: (workflow: Workflow, result: PollOutcome) => void;
  /** The runs and Workflows the running gauge is computed from at each scrape. */
  trackRuns: (source: RunSource) => () => void;
}

/** ok: the tracker answered; error: it did not; skipped: no valid configuration to poll with. */
export type PollOutcome = 'ok' | 'error' | 'skipped';
export const POLL_OUTCOMES: readonly PollOutcome[] = ['ok', 'error', 'skipped'];

export interface RunSource {
  runs(): readonly IssueRun[];
  workflows(): readonly Workflow[];
  /** Only the leader reports: standbys' caches hold the same runs, a sum would double them. */
  leading(): boolean;
}

/** The end a status change records: the write from unfinished to Finished=True. */
export interface RunEnding {
  phase: string;
  reason: string;
  /** startTime → completionTime; undefined for a run that ended before any Pod started. */
  durationSeconds?: number;
}

const isFinished = (status: IssueRunStatus | undefined): boolean =>
  findCondition(status?.conditions, FINISHED)?.status === 'True';

/**
 * Reason codes are CamelCase words (api Reasons, Pod outcomes). Anything else would be free
 * text in a label, one series per message: it is counted as `Other`.
 */
export function reasonLabel(reason: string | undefined): string {
  return reason !== undefined && /^[A-Z][A-Za-z0-9]{0,62}$/.test(reason) ? reason : 'Other';
}

/** The end `next` records over `previous`, if it records one (pure). */
export function runEnding(
  previous: IssueRunStatus | undefined,
  next: IssueRunStatus,
): RunEnding | undefined {
  if (!isFinished(next) || isFinished(previous)) return undefined;
  const ending: RunEnding = {
    phase: next.phase === 'Succeeded' ? 'Succeeded' : 'Failed',
    reason: reasonLabel(next.reason),
  };
  const start = next.startTime ? Date.parse(next.startTime) : Number.NaN;
  const end = next.completionTime ? Date.parse(next.completionTime) : Number.NaN;
  if (Number.isFinite(start) && Number.isFinite(end) && end >= start) {
    ending.durationSeconds = (end - start) / 1000;
  }
  return ending;
}

/** Running runs per namespace and Workflow; every Workflow of `workflows` appears, at 0 if idle. */
export function runningCounts(
  runs: readonly IssueRun[],
  workflows: readonly Workflow[],
): Map<string, { namespace: string; workflow: string; count: number }> {
  const counts = new Map<string, { namespace: string; workflow: string; count: number }>();
  const entry = (namespace: string, workflow: string) => {
    const key = `${namespace}/${workflow}`;
    let found = counts.get(key);
    if (!found) counts.set(key, (found = { namespace, workflow, count: 0 }));
    return found;
  };
  for (const workflow of workflows) {
    entry(workflow.metadata.namespace ?? '', workflow.metadata.name ?? '');
  }
  for (const run of runs) {
    if (run.status?.phase !== 'Running' || isFinished(run.status)) continue;
    entry(run.metadata.namespace ?? '', run.spec.workflowRef.name).count += 1;
  }
  return counts;
}

export interface CountedTokens {
  input: number;
  output: number;
  /** The cost counted so far (usage.cost), 0 when none was reported. */
  cost?: number;
}

/** A model as a label: what the agent named (bounded), `unknown` when it named none. */
export const modelLabel = (model: string | undefined): string =>
  model ? model.slice(0, 64) : 'unknown';

/**
 * What a new cumulative usage adds to what was counted (pure): only growth counts, so a log
 * read again from its start (usage going back to an early turn's, then up again) adds nothing
 * until it passes what was counted before.
 */
export function tokenGrowth(
  counted: CountedTokens,
  usage: TokenUsage,
): { delta: CountedTokens; counted: CountedTokens } {
  const input = Math.max(0, usage.inputTokens);
  const output = Math.max(0, usage.outputTokens);
  const costNow = usage.cost === undefined ? 0 : Math.max(0, Number(usage.cost) || 0);
  const costBefore = counted.cost ?? 0;
  return {
    delta: {
      input: Math.max(0, input - counted.input),
      output: Math.max(0, output - counted.output),
      cost: Math.max(0, costNow - costBefore),
    },
    counted: {
      input: Math.max(counted.input, input),
      output: Math.max(counted.output, output),
      cost: Math.max(costBefore, costNow),
    },
  };
}

// Agent runs take minutes to hours; hooks (an `npm ci`, a test suite) seconds to an hour.
const RUN_BUCKETS = [10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 86400];
const HOOK_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** One set per registry: both controllers of a manager ask for it, it registers once. */
const byRegistry = new WeakMap<Registry, RunMetrics>();

export function runMetrics(registry: Registry): RunMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const created = createRunMetrics(registry);
  byRegistry.set(registry, created);
  return created;
}

// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
function createRunMetrics(registry: Registry): RunMetrics {
  const registers = [registry];
  const sources = new Set<RunSource>();
  const finished = new Counter({
    name: 'lorenz_issueruns_finished_total',
    help: 'IssueRuns that ended, by phase (Succeeded, Failed) and reason code; counted by the status write that records the end, once per run',
    labelNames: ['namespace', 'workflow', 'phase', 'reason'],
    registers,
  });
  const runDuration = new Histogram({
    name: 'lorenz_issuerun_duration_seconds',
    help: 'From startTime to completionTime of the IssueRuns that ended (runs that ended before any Pod started are not observed)',
    labelNames: ['workflow', 'phase'],
    buckets: RUN_BUCKETS,
    registers,
  });
  const hookDuration = new Histogram({
    name: 'lorenz_hook_duration_seconds',
    help: "How long each hook took (durationMs of its completed or failed record in the run Pod's log), observed once per record, when its Event is created",
    labelNames: ['workflow', 'hook', 'status'],
    buckets: HOOK_BUCKETS,
    registers,
  });
  new Gauge({
    name: 'lorenz_issueruns_running',
    help: "IssueRuns in phase Running, from the controller's cache at scrape time; every Workflow has a series (0 when idle); reported by the leader only",
    labelNames: ['namespace', 'workflow'],
    registers,
    collect(this: Gauge<'namespace' | 'workflow'>) {
      this.reset();
      for (const source of sources) {
        if (!source.leading()) continue;
        for (const { namespace, workflow, count } of runningCounts(
          source.runs(),
          source.workflows(),
        ).values()) {
          this.set({ namespace, workflow }, count);
        }
      }
    },
  });
  const polls = new Counter({
    name: 'lorenz_tracker_polls_total',
    help: 'Tracker polls that were due, by result: ok (the tracker answered), error (it did not), skipped (the Workflow has no valid configuration to poll with)',
    labelNames: ['namespace', 'workflow', 'result'],
    registers,
  });
  const tokens = new Counter({
    name: 'lorenz_agent_tokens_total',
    help: "Tokens the agents used, by model and kind (input, output), counted as each run Pod's log reports its usage growing; a controller that restarts (or takes over) while a Pod runs counts again what that Pod used since its run's last status write",
    labelNames: ['namespace', 'workflow', 'model', 'kind'],
    registers,
  });
  const cost = new Counter({
    name: 'lorenz_agent_cost_total',
    help: "What the agents' tokens cost, by model and currency, from the price table or the agent's own cost report (docs/budgets.md), counted as each run Pod's log reports it growing",
    labelNames: ['namespace', 'workflow', 'model', 'currency'],
    registers,
  });
  /** Workflows whose poll series exist (bounded by the Workflows this replica polled). */
  const polledWorkflows = new Set<string>();
  /** What was counted of each Pod's cumulative usage, by Pod uid (dropped when it is gone). */
  const counted = new Map<string, CountedTokens>();

  return {
    statusWritten(run, previous, next) {
      const ending = runEnding(previous, next);
      if (!ending) return;
      const workflow = run.spec.workflowRef.name;
      finished.inc({
        namespace: run.metadata.namespace ?? '',
        workflow,
        phase: ending.phase,
        reason: ending.reason,
      });
      if (ending.durationSeconds !== undefined) {
        runDuration.observe({ workflow, phase: ending.phase }, ending.durationSeconds);
      }
    },
    hookRecorded(workflow, message) {
      if (message.status === 'started') return;
      const ms = message.durationMs;
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return;
      hookDuration.observe({ workflow, hook: message.hookName, status: message.status }, ms / 1000);
    },
    tokensRead(pod, usage) {
      const before = counted.get(pod.uid) ?? { input: 0, output: 0 };
      const { delta, counted: now } = tokenGrowth(before, usage);
      counted.set(pod.uid, now);
      const labels = {
        namespace: pod.namespace,
        workflow: pod.workflow,
        model: modelLabel(usage.model),
      };
      if (delta.input > 0) tokens.inc({ ...labels, kind: 'input' }, delta.input);
      if (delta.output > 0) tokens.inc({ ...labels, kind: 'output' }, delta.output);
      if ((delta.cost ?? 0) > 0 && usage.currency) {
        cost.inc({ ...labels, currency: usage.currency.slice(0, 16) }, delta.cost);
      }
    },
    tokensCounted(uid, usage) {
      if (!counted.has(uid)) counted.set(uid, tokenGrowth({ input: 0, output: 0 }, usage).counted);
    },
    forgetPod(uid) {
      counted.delete(uid);
    },
    polled(workflow, result) {
      const labels = {
        namespace: workflow.metadata.namespace ?? '',
        workflow: workflow.metadata.name ?? '',
      };
      // Every result's series from the first poll on: increase() over a series that appears
      // at 1 sees no increase, and the alerts would miss a tracker that fails from the start.
      const key = `${labels.namespace}/${labels.workflow}`;
      if (!polledWorkflows.has(key)) {
        polledWorkflows.add(key);
        for (const each of POLL_OUTCOMES) polls.inc({ ...labels, result: each }, 0);
      }
      polls.inc({ ...labels, result });
    },
    trackRuns(source) {
      sources.add(source);
      return () => void sources.delete(source);
    },
  };
}
