import { RUN_SOURCE_OPTIONS, parseRunArgs } from './args.js';
import type { IssueRun } from '../../api/index.js';
import type { RunRecord } from '../../archive/types.js';
import { reportingFailures } from './errors.js';
import { UsageError, outputOption } from '../usage.js';
import { humanDuration, spanMs } from './duration.js';
import { findRunArchive, type FindArchiveOptions } from './find-archive.js';
import { userCluster, type UserCluster } from './kube.js';
import { listIssueRuns } from './live.js';
import { formatTable } from './table.js';

type Output = (text: string) => void;

/** What names a run in `get runs` and `describe run`: where it was read, and whose it is. */
export interface RunId {
  source: 'live' | 'archived';
  namespace: string;
  name: string;
  uid: string;
  workflow: string;
  issue: string;
}

/** The RunId of an archived run. */
export function archivedRunId(run: RunRecord): RunId {
  return {
    source: 'archived',
    namespace: run.namespace,
    name: run.name,
    uid: run.uid,
    workflow: run.workflow,
    issue: run.issueIdentifier,
  };
}

/** One row of `lorenz get runs`: a live IssueRun or an archived one. */
export interface RunRow extends RunId {
  phase: string;
  reason: string;
  attempt: number;
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  duration?: string;
  branch?: string;
  totalTokens?: number;
  deletedAt?: string;
}

const timeText = (time: string | Date | undefined): string =>
  time instanceof Date ? time.toISOString() : (time ?? '');

export function liveRow(run: IssueRun): RunRow {
  const status = run.status ?? {};
  const startedAt = status.startTime;
  const finishedAt = status.completionTime;
  const span = spanMs(startedAt, finishedAt);
  const duration = status.duration ?? (span === undefined ? undefined : humanDuration(span));
  return {
    source: 'live',
    namespace: run.metadata.namespace ?? '',
    name: run.metadata.name ?? '',
    uid: run.metadata.uid ?? '',
    workflow: run.spec.workflowRef?.name ?? '',
    issue: run.spec.issue.identifier,
    phase: status.phase ?? 'Pending',
    reason: status.reason ?? '',
    attempt: status.attempt ?? 0,
    createdAt: timeText(run.metadata.creationTimestamp),
    ...(startedAt ? { startedAt } : {}),
    ...(finishedAt ? { finishedAt } : {}),
    ...(duration ? { duration } : {}),
    ...(status.git?.branch ? { branch: status.git.branch } : {}),
    ...(status.usage ? { totalTokens: status.usage.totalTokens } : {}),
  };
}

export function archivedRow(run: RunRecord): RunRow {
  const span = spanMs(run.startedAt, run.finishedAt);
  return {
    ...archivedRunId(run),
    phase: run.phase,
    reason: run.reason ?? '',
    attempt: run.attempts,
    createdAt: run.createdAt,
    ...(run.startedAt ? { startedAt: run.startedAt } : {}),
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
    ...(span === undefined ? {} : { duration: humanDuration(span) }),
    ...(run.branch ? { branch: run.branch } : {}),
    totalTokens: run.usage.totalTokens,
    ...(run.deletedAt ? { deletedAt: run.deletedAt } : {}),
  };
}

/** Live and archived rows in one list: a live run wins over its archived row (same uid). */
export function mergeRows(live: readonly RunRow[], archived: readonly RunRow[]): RunRow[] {
  const seen = new Set(live.map((row) => row.uid));
  return [...live, ...archived.filter((row) => !seen.has(row.uid))].sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) ||
      a.name.localeCompare(b.name) ||
      b.createdAt.localeCompare(a.createdAt),
  );
}

export type RunsOutput = 'table' | 'wide' | 'json';

export function formatRuns(
  rows: readonly RunRow[],
  options: { allNamespaces: boolean; output: RunsOutput; now?: number },
): string {
  if (options.output === 'json') return `${JSON.stringify({ items: rows }, null, 2)}\n`;
  const now = options.now ?? Date.now();
  const wide = options.output === 'wide';
  const headers = [
    ...(options.allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'WORKFLOW',
    'ISSUE',
    'PHASE',
    'REASON',
    'ATTEMPT',
    'STARTED',
    'DURATION',
    'SOURCE',
    ...(wide ? ['UID', 'BRANCH', 'TOKENS', 'DELETED'] : []),
  ];
  const age = (time: string | undefined) => {
    const span = spanMs(time, new Date(now).toISOString());
    return span === undefined ? '' : humanDuration(span);
  };
  const cells = rows.map((row) => [
    ...(options.allNamespaces ? [row.namespace] : []),
    row.name,
    row.workflow,
    row.issue,
    row.phase,
    row.reason,
    String(row.attempt),
    age(row.startedAt ?? row.createdAt),
    row.duration ?? '',
    row.source === 'live' ? 'Live' : 'Archived',
    ...(wide
      ? [
          row.uid,
          row.branch ?? '',
          row.totalTokens === undefined ? '' : String(row.totalTokens),
          row.deletedAt ? age(row.deletedAt) : '',
        ]
      : []),
  ]);
  return formatTable(headers, cells);
}

/** Most archived rows one `get runs --all` reads (pages of 1000). */
const MAX_ARCHIVED_ROWS = 10_000;

/** A run command: a Command (main.ts) that also takes the seams tests give it. */
export type RunCommand = (
  args: string[],
  out: Output,
  err: Output,
  deps?: RunCommandDeps,
) => Promise<number>;

export interface RunCommandDeps {
  /** Seams for tests: the cluster, and how a DSN is opened. */
  cluster?: (kubeconfig: string | undefined) => UserCluster;
  openStore?: FindArchiveOptions['openStore'];
  defaultArchivePath?: string;
  now?: () => number;
}

/** The flags `lorenz get runs` parses (their help: cli/command-help.ts). */
export const GET_RUNS_OPTIONS = {
  ...RUN_SOURCE_OPTIONS,
  'all-namespaces': { type: 'boolean', short: 'A', default: false },
  workflow: { type: 'string' },
  issue: { type: 'string' },
  all: { type: 'boolean', default: false },
  output: { type: 'string', short: 'o' },
} as const;

/**
 * `lorenz get runs [-n NS | -A] [--workflow W] [--issue ID] [--all] [--output table|wide|json]
 * [--kubeconfig F] [--archive-dsn DSN] [--archive-url URL]`: the IssueRuns of the cluster, as
 * kubectl reads them, and with --all the archived runs that are gone from it, in one table.
 */
export const getRunsCommand: RunCommand = async (args, out, err, deps = {}) => {
  const { values } = parseRunArgs(args, GET_RUNS_OPTIONS);
  const output: RunsOutput = outputOption(values.output, ['table', 'wide', 'json']);
  if (values.namespace && values['all-namespaces'])
    throw new UsageError('-n/--namespace and -A/--all-namespaces cannot be given together');
  const cluster = (deps.cluster ?? userCluster)(values.kubeconfig);
  const allNamespaces = values['all-namespaces'];
  const namespace = allNamespaces ? undefined : (values.namespace ?? cluster.namespace);
  const keep = (row: RunRow) =>
    (!values.workflow || row.workflow === values.workflow) &&
    (!values.issue || row.issue === values.issue);
  return reportingFailures(err, async () => {
    try {
      const live = (await listIssueRuns(cluster.client, namespace)).map(liveRow).filter(keep);
      let archived: RunRow[] = [];
      if (values.all) {
        const reader = await findRunArchive({ values, cluster, err, deps });
        if (reader) {
          try {
            let next: string | undefined;
            do {
              const page = await reader.listRuns(namespace, {
                ...(values.workflow ? { workflow: values.workflow } : {}),
                ...(values.issue ? { issue: values.issue } : {}),
                limit: 1000,
                ...(next ? { continue: next } : {}),
              });
              archived.push(...page.runs.map(archivedRow));
              next = page.continue;
            } while (next && archived.length < MAX_ARCHIVED_ROWS);
            if (next)
              err(
                `lorenz: showing the newest ${archived.length} archived runs; narrow with -n, --workflow or --issue\n`,
              );
          } finally {
            await reader.close();
          }
        }
        archived = archived.filter(keep);
      }
      const rows = mergeRows(live, archived);
      if (rows.length === 0 && output !== 'json') {
        err(namespace ? `No runs found in ${namespace} namespace.\n` : 'No runs found.\n');
        return 0;
      }
      out(formatRuns(rows, { allNamespaces, output, now: (deps.now ?? Date.now)() }));
      return 0;
    } finally {
      cluster.client.close();
    }
  });
};
