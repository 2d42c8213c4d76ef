import type { TimelineBar, TranscriptEntry } from './view-api.js';
import { get, isRecord, num, records, str, type Json } from './json.js';

/**
 * The runner's log (docs/run-log.md: one JSON record a line) turned into what the web view
 * shows: the transcript (messages, thoughts, tool calls and their results, turns, hooks, git
 * steps, the agent's stderr) and the timeline bars (hooks, git steps, turns, tool calls).
 * Pure: the server feeds it lines from the Pod's log or from the archive, in log order, one
 * builder per Pod (slot and attempt); `seq` counts entries across all the builders that
 * share a counter, so one transcript stream numbers its entries once.
 */

export interface TranscriptBuilder {
  /** The entries one log line adds (none for records the view does not show). */
  push(line: string): TranscriptEntry[];
  /** Marks bytes the archive dropped at this point of the log. */
  elided(bytes: number): TranscriptEntry;
  /** The bars so far; an unfinished one has no finishedAt and status running. */
  timeline(): TimelineBar[];
  /** The whole output of the hook run `seq` seen so far (concatenated hook_output texts). */
  hookOutput(seq: number): string | undefined;
}

export interface BuilderOptions {
  slot: number;
  attempt: number;
  /** Shared entry counter (one per transcript stream). */
  counter?: { next: number };
  /** Keep each hook run's whole output, for /hooks/{seq}/output (off for transcripts). */
  keepHookOutput?: boolean;
}

type Bar = TimelineBar;

const TURN_END: Record<string, 'completed' | 'failed' | 'cancelled'> = {
  turn_completed: 'completed',
  turn_failed: 'failed',
  turn_cancelled: 'cancelled',
};

function parse(line: string): Json | undefined {
  const text = line.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) && typeof value.type === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The text of an ACP content block, or of a list of tool-call content items. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(textOf).filter(Boolean).join('\n');
  if (!isRecord(content)) return '';
  if (typeof content.text === 'string') return content.text;
  // A tool call's content item: {type: 'content', content: {type: 'text', text}}, or a diff.
  if (isRecord(content.content)) return textOf(content.content);
  if (typeof content.newText === 'string')
    return `${str(content.path) ?? ''}\n${content.newText}`.trim();
  return '';
}

const jsonText = (value: unknown): string | undefined =>
  value === undefined ? undefined : JSON.stringify(value);

/** One builder's state: its Pod, its bars, and what is open (hooks, turns, tool calls). */
interface State {
  options: BuilderOptions;
  counter: { next: number };
  bars: Bar[];
  openHooks: Map<string, Bar>;
  openTurns: Map<number, Bar>;
  openTools: Map<string, Bar>;
  hookOutputs: Map<number, string[]>;
  /** hook_output.seq of the hook run that started last, per hook name. */
  hookSeqOf: Map<string, number>;
  hooksStarted: number;
}

/** What one kind of record (or of session update) adds, given its message and time. */
type Handler = (state: State, message: Json, at: string | undefined) => TranscriptEntry[];

const entry = (
  state: State,
  at: string | undefined,
  body: Record<string, unknown>,
): TranscriptEntry =>
  ({
    seq: state.counter.next++,
    slot: state.options.slot,
    attempt: state.options.attempt,
    ...(at ? { at } : {}),
    ...body,
  }) as TranscriptEntry;

function bar(
  state: State,
  kind: Bar['kind'],
  label: string,
  startedAt: string | undefined,
  finishedAt?: string,
  status: Bar['status'] = 'running',
): Bar | undefined {
  if (!startedAt) return undefined;
  const { slot, attempt } = state.options;
  const made: Bar = {
    kind,
    slot,
    attempt,
    label,
    startedAt,
    ...(finishedAt ? { finishedAt } : {}),
    status,
  };
  state.bars.push(made);
  return made;
}

function finish(open: Bar | undefined, at: string | undefined, ok: boolean): void {
  if (!open) return;
  if (at) open.finishedAt = at;
  open.status = ok ? 'succeeded' : 'failed';
}

/** A bar that ended at `at` after `durationMs` (a record written once, when it finished). */
const endedBar = (at: string, durationMs: number): string =>
  new Date(Date.parse(at) - durationMs).toISOString();

const chunk =
  (kind: 'message' | 'thought'): Handler =>
  (state, update, at) => {
    const text = textOf(update.content);
    return text ? [entry(state, at, { kind, text })] : [];
  };

const toolCall: Handler = (state, update, at) => {
  const toolCallId = str(update.toolCallId) ?? '';
  const title = str(update.title) ?? toolCallId;
  const status = str(update.status);
  const toolKind = str(update.kind);
  const input = jsonText(update.rawInput);
  const open = bar(state, 'tool_call', title, at);
  if (open && toolCallId) state.openTools.set(toolCallId, open);
  if (open && (status === 'completed' || status === 'failed'))
    finish(open, at, status === 'completed');
  return [
    entry(state, at, {
      kind: 'tool_call',
      toolCallId,
      title,
      ...(toolKind ? { toolKind } : {}),
      ...(status ? { status } : {}),
      ...(input ? { input } : {}),
    }),
  ];
};

const toolCallUpdate: Handler = (state, update, at) => {
  const toolCallId = str(update.toolCallId) ?? '';
  const status = str(update.status) ?? 'in_progress';
  const open = state.openTools.get(toolCallId);
  if (open && typeof update.title === 'string') open.label = update.title;
  const done = status === 'completed' || status === 'failed';
  if (done) {
    finish(open, at, status === 'completed');
    state.openTools.delete(toolCallId);
  }
  const text =
    textOf(update.content) || (update.rawOutput === undefined ? '' : jsonText(update.rawOutput));
  if (!text && !done) return [];
  return [entry(state, at, { kind: 'tool_result', toolCallId, status, text: text ?? '' })];
};

const plan: Handler = (state, update, at) => {
  const entries = records(update.entries).map((each) => ({
    content: str(each.content) ?? '',
    status: str(each.status) ?? '',
    ...(str(each.priority) ? { priority: str(each.priority) } : {}),
  }));
  return [entry(state, at, { kind: 'plan', entries })];
};

/** The ACP session updates the view shows, by sessionUpdate. */
const UPDATES = new Map<string, Handler>([
  ['agent_message_chunk', chunk('message')],
  ['agent_thought_chunk', chunk('thought')],
  ['tool_call', toolCall],
  ['tool_call_update', toolCallUpdate],
  ['plan', plan],
]);

const notification: Handler = (state, message, at) => {
  const update = get(message, 'update');
  if (!isRecord(update)) return [];
  const handler = UPDATES.get(str(update.sessionUpdate) ?? '');
  return handler ? handler(state, update, at) : [];
};

const turnStarted: Handler = (state, message, at) => {
  const turn = num(message.turn) ?? 0;
  const open = bar(state, 'turn', `turn ${turn}`, at);
  if (open) state.openTurns.set(turn, open);
  return [entry(state, at, { kind: 'turn', turn, status: 'started' })];
};

const turnEnded =
  (ended: 'completed' | 'failed' | 'cancelled'): Handler =>
  (state, message, at) => {
    const turn = num(message.turn) ?? 0;
    finish(state.openTurns.get(turn), at, ended === 'completed');
    state.openTurns.delete(turn);
    const detail = str(message.stopReason) ?? str(message.message);
    return [entry(state, at, { kind: 'turn', turn, status: ended, ...(detail ? { detail } : {}) })];
  };

/** The seq of the hook run a hook_execution record is about; opens or closes its bar. */
function hookRun(state: State, message: Json, at: string | undefined): number | undefined {
  const hookName = str(message.hookName) ?? '';
  const status = str(message.status) ?? '';
  if (status === 'started') {
    const hookSeq = state.hooksStarted++;
    state.hookSeqOf.set(hookName, hookSeq);
    const open = bar(state, 'hook', hookName, at);
    if (open) state.openHooks.set(hookName, open);
    return hookSeq;
  }
  const open = state.openHooks.get(hookName);
  state.openHooks.delete(hookName);
  if (open) finish(open, at, status === 'completed');
  else if (at) {
    // A hook that never ran (one failed record): a bar of its duration, if any.
    const start = endedBar(at, num(message.durationMs) ?? 0);
    bar(state, 'hook', hookName, start, at, status === 'completed' ? 'succeeded' : 'failed');
  }
  return state.hookSeqOf.get(hookName);
}

const hookExecution: Handler = (state, message, at) => {
  const hookSeq = hookRun(state, message, at);
  const exitCode = num(message.exitCode);
  return [
    entry(state, at, {
      kind: 'hook',
      hookName: str(message.hookName) ?? '',
      status: str(message.status) ?? '',
      ...(hookSeq === undefined ? {} : { hookSeq }),
      ...(exitCode === undefined ? {} : { exitCode }),
    }),
  ];
};

const hookOutputRecord: Handler = (state, message, at) => {
  const hookName = str(message.hookName) ?? '';
  const hookSeq = num(message.seq) ?? state.hookSeqOf.get(hookName) ?? 0;
  const text = str(message.text) ?? '';
  if (state.options.keepHookOutput) {
    const parts = state.hookOutputs.get(hookSeq) ?? [];
    parts.push(text);
    state.hookOutputs.set(hookSeq, parts);
  }
  return [entry(state, at, { kind: 'hook_output', hookName, hookSeq, text })];
};

const gitWorkspace: Handler = (state, message, at) => {
  const step = str(message.step) ?? '';
  const status = str(message.status) ?? '';
  const detail = str(message.detail);
  if (at) {
    const start = endedBar(at, num(message.durationMs) ?? 0);
    bar(state, 'git', `git ${step}`, start, at, status === 'failed' ? 'failed' : 'succeeded');
  }
  return [entry(state, at, { kind: 'git', step, status, ...(detail ? { detail } : {}) })];
};

/** The records the view shows whose message is an object, by type (stderr is apart). */
const RECORDS = new Map<string, Handler>([
  ['session_notification', notification],
  ['turn_started', turnStarted],
  ...Object.entries(TURN_END).map(([type, ended]) => [type, turnEnded(ended)] as const),
  ['hook_execution', hookExecution],
  ['hook_output', hookOutputRecord],
  ['git_workspace', gitWorkspace],
]);

function push(state: State, line: string): TranscriptEntry[] {
  const record = parse(line);
  if (!record) return [];
  const type = str(record.type) ?? '';
  const at = str(record.at);
  const message = record.message;
  if (type === 'stderr') {
    const text = typeof message === 'string' ? message : JSON.stringify(message);
    return [entry(state, at, { kind: 'stderr', text })];
  }
  const handler = RECORDS.get(type);
  return handler && isRecord(message) ? handler(state, message, at) : [];
}

export function createTranscriptBuilder(options: BuilderOptions): TranscriptBuilder {
  const state: State = {
    options,
    counter: options.counter ?? { next: 0 },
    bars: [],
    openHooks: new Map(),
    openTurns: new Map(),
    openTools: new Map(),
    hookOutputs: new Map(),
    hookSeqOf: new Map(),
    hooksStarted: 0,
  };
  return {
    push: (line) => push(state, line),
    elided: (bytes) => entry(state, undefined, { kind: 'elided', bytes }),
    timeline: () => state.bars.map((each) => ({ ...each })),
    hookOutput(seq) {
      const parts = state.hookOutputs.get(seq);
      return parts ? parts.join('') : undefined;
    },
  };
}

/** A whole log at once: its entries and its bars (tests, finished runs). */
export function transcriptOf(
  lines: readonly string[],
  options: BuilderOptions,
): { entries: TranscriptEntry[]; timeline: TimelineBar[] } {
  const builder = createTranscriptBuilder(options);
  const entries = lines.flatMap((line) => builder.push(line));
  return { entries, timeline: builder.timeline() };
}
