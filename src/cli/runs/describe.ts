import { RUN_SOURCE_OPTIONS, parseRunArgs } from './args.js';
import { workspaceStartText, type IssueRun } from '../../api/index.js';
import type { ArchivedRun, LogFilter, TokenCounts } from '../../archive/types.js';
import { reportingFailures } from './errors.js';
import type { ArchiveReader } from './archive-reader.js';
import { humanDuration, shortMs, spanMs } from './duration.js';
import { escapeCell } from './escape.js';
import { findRunArchive } from './find-archive.js';
import { type RunCommand, type RunId, archivedRunId } from './get-runs.js';
import { num, str, isRecord, records } from '../../server/json.js';
import { userCluster, type UserCluster } from './kube.js';
import { agentState, eventsOf, getIssueRun, podLog, runPods } from './live.js';
import { formatTable } from './table.js';
import { formatInboxSection, inboxViewOf, type InboxView } from './describe-inbox.js';

export interface AttemptView {
  slot: number;
  attempt: number;
  pod: string;
  /** The node, or the SSH worker. */
  where: string;
  startedAt?: string;
  finishedAt?: string;
  phase: string;
  endedBy: string;
}

export interface HookView {
  slot: number;
  attempt?: number;
  name: string;
  status: string;
  exitCode?: number | null;
  durationMs?: number;
}

/** A commit an attempt pushed to the run's branch. */
export interface PushedCommitView {
  slot: number;
  attempt: number;
  sha: string;
  subject: string;
}

export interface EventView {
  type: string;
  reason: string;
  object: string;
  message: string;
  count: number;
  lastTime?: string;
}

export interface RunView extends RunId {
  issueTitle: string;
  issueState?: string;
  phase: string;
  reason?: string;
  message?: string;
  branch?: string;
  /** What the workspace started from (status.workspaceSource), as a line. */
  workspace?: string;
  createdAt?: string;
  startedAt?: string;
  finishedAt?: string;
  deletedAt?: string;
  turns: number;
  toolCalls: number;
  usage?: TokenCounts;
  attempts: AttemptView[];
  /** For git workspaces: what each attempt pushed, newest first within an attempt. */
  pushedCommits: PushedCommitView[];
  hooks: HookView[];
  events: EventView[];
  /** A live run's waiting requests and recent decisions (status.inbox). */
  inbox?: InboxView;
}

/** An archived `SHA subject` entry of AttemptRecord.git.pushedCommits. */
function commitOfLine(line: string): { sha: string; subject: string } {
  const space = line.indexOf(' ');
  return space < 0
    ? { sha: line, subject: '' }
    : { sha: line.slice(0, space), subject: line.slice(space + 1) };
}

/** The commits of a `push` git_workspace record in a live Pod's log line; none otherwise. */
export function pushedInLine(line: string): { sha: string; subject: string }[] {
  if (!line.includes('"git_workspace"') || !line.includes('"push"')) return [];
  try {
    const record: unknown = JSON.parse(line);
    if (!isRecord(record) || record.type !== 'git_workspace') return [];
    const message = record.message;
    if (!isRecord(message) || message.step !== 'push' || !Array.isArray(message.commits)) return [];
    return (message.commits as unknown[]).flatMap((commit) =>
      isRecord(commit) && typeof commit.sha === 'string'
        ? [{ sha: commit.sha, subject: str(commit.subject) ?? '' }]
        : [],
    );
  } catch {
    return [];
  }
}

/** Whether a log line is an agent's tool call (a `tool_call` session update). */
export function isToolCall(line: string): boolean {
  if (!line.includes('"tool_call"')) return false;
  try {
    const record: unknown = JSON.parse(line);
    if (!isRecord(record) || record.type !== 'session_notification') return false;
    const message = record.message;
    return isRecord(message) && isRecord(message.update)
      ? message.update.sessionUpdate === 'tool_call'
      : false;
  } catch {
    return false;
  }
}

const hookOf = (record: Record<string, unknown>, attempt?: number): HookView => ({
  slot: num(record.slot) ?? 0,
  ...(attempt === undefined ? {} : { attempt }),
  name: str(record.hookName) ?? str(record.name) ?? '',
  status: str(record.status) ?? '',
  ...(record.exitCode === null || typeof record.exitCode === 'number'
    ? { exitCode: record.exitCode }
    : {}),
  ...(num(record.durationMs) === undefined ? {} : { durationMs: num(record.durationMs) }),
});

const optionalWorkspace = (source: unknown): { workspace?: string } => {
  const text = workspaceStartText(source);
  return text === undefined ? {} : { workspace: text };
};

const archivedStatus = (object: Record<string, unknown>): Record<string, unknown> =>
  isRecord(object.status) ? object.status : {};

export async function archivedView(reader: ArchiveReader, found: ArchivedRun): Promise<RunView> {
  const { run } = found;
  let toolCalls = 0;
  for await (const entry of reader.readLog(run, {} satisfies LogFilter)) {
    if (entry.kind !== 'data') continue;
    for (const line of entry.piece.data.split('\n')) if (isToolCall(line)) toolCalls += 1;
  }
  return {
    ...archivedRunId(run),
    issueTitle: run.issueTitle,
    ...(run.issueState ? { issueState: run.issueState } : {}),
    phase: run.phase,
    ...(run.reason ? { reason: run.reason } : {}),
    ...(run.message ? { message: run.message } : {}),
    ...(run.branch ? { branch: run.branch } : {}),
    ...optionalWorkspace(archivedStatus(run.object).workspaceSource),
    createdAt: run.createdAt,
    ...(run.startedAt ? { startedAt: run.startedAt } : {}),
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
    ...(run.deletedAt ? { deletedAt: run.deletedAt } : {}),
    turns: found.attempts.reduce((sum, attempt) => sum + attempt.turns, 0),
    toolCalls,
    usage: run.usage,
    attempts: found.attempts.map((attempt) => ({
      slot: attempt.slot,
      attempt: attempt.attempt,
      pod: attempt.podName,
      where: attempt.host ? `ssh ${attempt.host}` : (attempt.node ?? ''),
      ...(attempt.startedAt ? { startedAt: attempt.startedAt } : {}),
      ...(attempt.finishedAt ? { finishedAt: attempt.finishedAt } : {}),
      phase: attempt.phase,
      endedBy: [attempt.reason, attempt.message].filter(Boolean).join(': '),
    })),
    pushedCommits: found.attempts.flatMap((attempt) =>
      (attempt.git?.pushedCommits ?? []).map((line) => ({
        slot: attempt.slot,
        attempt: attempt.attempt,
        ...commitOfLine(line),
      })),
    ),
    // The finished record of each hook; a hook still `started` when the attempt ended shows so.
    hooks: found.attempts.flatMap((attempt) => {
      const hooks = attempt.hooks.map((hook) => hookOf(hook, attempt.attempt));
      return hooks.filter(
        (hook, index) =>
          hook.status !== 'started' ||
          !hooks.slice(index + 1).some((later) => later.name === hook.name),
      );
    }),
    events: found.events.map((event) => ({
      type: event.type,
      reason: event.reason,
      object: `${event.involvedKind}/${event.involvedName}`,
      message: event.message,
      count: event.count,
      ...(event.lastTime ? { lastTime: event.lastTime } : {}),
    })),
  };
}

const timeText = (time: string | Date | undefined): string | undefined =>
  time instanceof Date ? time.toISOString() : time;

export async function liveView(cluster: UserCluster, run: IssueRun): Promise<RunView> {
  const namespace = run.metadata.namespace ?? '';
  const uid = run.metadata.uid ?? '';
  const status = run.status ?? {};
  const pods = await runPods(cluster.client, namespace, { name: run.metadata.name ?? '', uid });
  const slots = new Map((status.slots ?? []).map((slot) => [slot.slot, slot]));
  let toolCalls = 0;
  const pushedCommits: PushedCommitView[] = [];
  for (const pod of pods) {
    await podLog(cluster.client, namespace, pod.name, {
      follow: false,
      onLine: (line) => {
        if (isToolCall(line)) toolCalls += 1;
        for (const commit of pushedInLine(line)) {
          pushedCommits.push({ slot: pod.slot, attempt: pod.attempt, ...commit });
        }
      },
    }).catch(() => undefined);
  }
  const events = [
    ...(await eventsOf(cluster.client, namespace, uid)),
    ...(await Promise.all(pods.map((pod) => eventsOf(cluster.client, namespace, pod.uid)))).flat(),
  ].sort((a, b) => (a.lastTime ?? '').localeCompare(b.lastTime ?? ''));
  const createdAt = timeText(run.metadata.creationTimestamp);
  const inbox = inboxViewOf(run);
  return {
    source: 'live',
    namespace,
    name: run.metadata.name ?? '',
    uid,
    workflow: run.spec.workflowRef?.name ?? '',
    issue: run.spec.issue.identifier,
    issueTitle: run.spec.issue.title,
    ...(run.spec.issue.state ? { issueState: run.spec.issue.state } : {}),
    phase: status.phase ?? 'Pending',
    ...(status.reason ? { reason: status.reason } : {}),
    ...(status.message ? { message: status.message } : {}),
    ...(status.git?.branch ? { branch: status.git.branch } : {}),
    ...optionalWorkspace(status.workspaceSource),
    ...(createdAt ? { createdAt } : {}),
    ...(status.startTime ? { startedAt: status.startTime } : {}),
    ...(status.completionTime ? { finishedAt: status.completionTime } : {}),
    turns: status.turn ?? 0,
    toolCalls,
    ...(status.usage ? { usage: status.usage } : {}),
    attempts: pods.map((pod) => {
      const state = agentState(pod.pod);
      const slot = slots.get(pod.slot);
      const latest = slot?.attempt === pod.attempt;
      const ended =
        latest && slot?.reason
          ? [slot.reason, slot.message].filter(Boolean).join(': ')
          : state.exitCode === undefined
            ? (state.waiting ?? '')
            : `exit ${state.exitCode}${state.reason ? ` (${state.reason})` : ''}`;
      return {
        slot: pod.slot,
        attempt: pod.attempt,
        pod: pod.name,
        where: latest && slot?.host ? `ssh ${slot.host}` : (pod.node ?? ''),
        ...(state.startedAt ? { startedAt: state.startedAt } : {}),
        ...(state.finishedAt ? { finishedAt: state.finishedAt } : {}),
        phase: pod.phase,
        endedBy: ended,
      };
    }),
    pushedCommits,
    hooks: records(status.hooks).map((hook) => hookOf(hook)),
    events,
    ...(inbox ? { inbox } : {}),
  };
}

// eslint-disable-next-line max-lines-per-function -- one run's describe output, section by section in print order
export function formatRunView(view: RunView, now = Date.now()): string {
  const field = (label: string, value: string | number | undefined) =>
    value === undefined || value === ''
      ? ''
      : `${`${label}:`.padEnd(14)}${escapeCell(String(value))}\n`;
  const at = (time: string | undefined) => {
    const span = spanMs(time, new Date(now).toISOString());
    return time && span !== undefined ? `${time} (${humanDuration(span)} ago)` : undefined;
  };
  const took = (from?: string, to?: string) => {
    const span = spanMs(from, to);
    return span === undefined ? '' : humanDuration(span);
  };
  const usage = view.usage
    ? `${view.usage.inputTokens} in, ${view.usage.outputTokens} out, ${view.usage.totalTokens} total tokens`
    : undefined;
  const indent = (text: string) => text.replace(/^(?=.)/gm, '  ');
  const section = (title: string, headers: string[], rows: string[][]) =>
    `${title}:\n${rows.length === 0 ? '  <none>\n' : indent(formatTable(headers, rows))}`;
  return [
    field('Name', view.name),
    field('Namespace', view.namespace),
    field('UID', view.uid),
    field(
      'Source',
      view.source === 'live'
        ? 'Live (in the cluster)'
        : `Archived${view.deletedAt ? ` (deleted ${view.deletedAt})` : ''}`,
    ),
    field('Workflow', view.workflow),
    field('Issue', `${view.issue}${view.issueTitle ? ` ${view.issueTitle}` : ''}`),
    field('Issue state', view.issueState),
    field('Phase', `${view.phase}${view.reason ? ` (${view.reason})` : ''}`),
    field('Message', view.message),
    field('Branch', view.branch),
    field('Workspace', view.workspace),
    field('Created', at(view.createdAt)),
    field('Started', at(view.startedAt)),
    field('Finished', at(view.finishedAt)),
    field('Duration', took(view.startedAt, view.finishedAt)),
    field('Turns', view.turns),
    field('Tool calls', view.toolCalls),
    field('Usage', usage),
    section(
      'Attempts',
      ['SLOT', 'ATTEMPT', 'POD', 'NODE/HOST', 'STARTED', 'DURATION', 'PHASE', 'ENDED BY'],
      view.attempts.map((attempt) => [
        String(attempt.slot),
        String(attempt.attempt),
        attempt.pod,
        attempt.where,
        attempt.startedAt ?? '',
        took(attempt.startedAt, attempt.finishedAt),
        attempt.phase,
        attempt.endedBy,
      ]),
    ),
    // Only for a git workspace (a branch, or commits): other runs push nothing to show.
    view.branch || view.pushedCommits.length > 0
      ? section(
          'Pushed commits',
          ['SLOT', 'ATTEMPT', 'COMMIT', 'SUBJECT'],
          view.pushedCommits.map((commit) => [
            String(commit.slot),
            String(commit.attempt),
            commit.sha.slice(0, 12),
            commit.subject,
          ]),
        )
      : '',
    formatInboxSection(view.inbox),
    section(
      'Hooks',
      ['SLOT', 'ATTEMPT', 'HOOK', 'STATUS', 'EXIT', 'DURATION'],
      view.hooks.map((hook) => [
        String(hook.slot),
        hook.attempt === undefined ? '' : String(hook.attempt),
        hook.name,
        hook.status,
        hook.exitCode === undefined
          ? ''
          : hook.exitCode === null
            ? 'killed'
            : String(hook.exitCode),
        hook.durationMs === undefined ? '' : shortMs(hook.durationMs),
      ]),
    ),
    section(
      'Events',
      ['TYPE', 'REASON', 'AGE', 'OBJECT', 'MESSAGE'],
      view.events.map((event) => {
        const span = spanMs(event.lastTime, new Date(now).toISOString());
        return [
          event.type,
          event.reason,
          `${span === undefined ? '' : humanDuration(span)}${event.count > 1 ? ` (x${event.count})` : ''}`,
          event.object,
          event.message,
        ];
      }),
    ),
  ].join('');
}

/** The flags `lorenz describe run` parses (their help: cli/command-help.ts). */
export const DESCRIBE_RUN_OPTIONS = RUN_SOURCE_OPTIONS;

/**
 * `lorenz describe run RUN [-n NS]`: attempts (Pod, node or host, start, duration, what ended
 * each), hooks with exit codes and durations, turns, tool calls, usage, branch and Events:
 * from the cluster while the IssueRun is there, else from the archive.
 */
export const describeRunCommand: RunCommand = async (args, out, err, deps = {}) => {
  const { values, name } = parseRunArgs(args, DESCRIBE_RUN_OPTIONS, 'describe run');
  const cluster = (deps.cluster ?? userCluster)(values.kubeconfig);
  const namespace = values.namespace ?? cluster.namespace;
  const now = (deps.now ?? Date.now)();
  return reportingFailures(err, async () => {
    try {
      const live = await getIssueRun(cluster.client, namespace, name);
      if (live) {
        out(formatRunView(await liveView(cluster, live), now));
        return 0;
      }
      const reader = await findRunArchive({ values, cluster, err, deps });
      try {
        const found = await reader?.getRun(namespace, name);
        if (!reader || !found) {
          err(
            `lorenz: run ${namespace}/${name} not found${reader ? ` (in the cluster nor in ${reader.where})` : ''}\n`,
          );
          return 1;
        }
        out(formatRunView(await archivedView(reader, found), now));
        return 0;
      } finally {
        await reader?.close();
      }
    } finally {
      cluster.client.close();
    }
  });
};
