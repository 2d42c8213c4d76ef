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

export function createTranscriptBuilder(options: BuilderOptions): TranscriptBuilder {
  const { slot, attempt } = options;
  const counter = options.counter ?? { next: 0 };
  const bars: Bar[] = [];
  const openHooks = new Map<string, Bar>();
  const openTurns = new Map<number, Bar>();
  const openTools = new Map<string, Bar>();
  const hookOutputs = new Map<number, string[]>();
  /** hook_output.seq of the hook run that started last, per hook name. */
  const hookSeqOf = new Map<string, number>();
  let hooksStarted = 0;

  const entry = (at: string | undefined, body: Record<string, unknown>): TranscriptEntry =>
    ({
      seq: counter.next++,
      slot,
      attempt,
      ...(at ? { at } : {}),
      ...body,
    }) as TranscriptEntry;

  const bar = (
    kind: Bar['kind'],
    label: string,
    startedAt: string | undefined,
    finishedAt?: string,
    status: Bar['status'] = 'running',
  ): Bar | undefined => {
    if (!startedAt) return undefined;
    const made: Bar = {
      kind,
      slot,
      attempt,
      label,
      startedAt,
      ...(finishedAt ? { finishedAt } : {}),
      status,
    };
    bars.push(made);
    return made;
  };

  const finish = (open: Bar | undefined, at: string | undefined, ok: boolean): void => {
    if (!open) return;
    if (at) open.finishedAt = at;
    open.status = ok ? 'succeeded' : 'failed';
  };

  function notification(message: Json, at: string | undefined): TranscriptEntry[] {
    const update = get(message, 'update');
    if (!isRecord(update)) return [];
    const kind = str(update.sessionUpdate);
    if (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') {
      const text = textOf(update.content);
      if (!text) return [];
      return [entry(at, { kind: kind === 'agent_message_chunk' ? 'message' : 'thought', text })];
    }
    if (kind === 'tool_call') {
      const toolCallId = str(update.toolCallId) ?? '';
      const title = str(update.title) ?? toolCallId;
      const status = str(update.status);
      const toolKind = str(update.kind);
      const input = jsonText(update.rawInput);
      const open = bar('tool_call', title, at);
      if (open && toolCallId) openTools.set(toolCallId, open);
      if (open && (status === 'completed' || status === 'failed'))
        finish(open, at, status === 'completed');
      return [
        entry(at, {
          kind: 'tool_call',
          toolCallId,
          title,
          ...(toolKind ? { toolKind } : {}),
          ...(status ? { status } : {}),
          ...(input ? { input } : {}),
        }),
      ];
    }
    if (kind === 'tool_call_update') {
      const toolCallId = str(update.toolCallId) ?? '';
      const status = str(update.status) ?? 'in_progress';
      const open = openTools.get(toolCallId);
      if (open && typeof update.title === 'string') open.label = update.title;
      if (status === 'completed' || status === 'failed') {
        finish(open, at, status === 'completed');
        openTools.delete(toolCallId);
      }
      const text =
        textOf(update.content) ||
        (update.rawOutput === undefined ? '' : jsonText(update.rawOutput));
      if (!text && status !== 'completed' && status !== 'failed') return [];
      return [entry(at, { kind: 'tool_result', toolCallId, status, text: text ?? '' })];
    }
    if (kind === 'plan') {
      const entries = records(update.entries).map((each) => ({
        content: str(each.content) ?? '',
        status: str(each.status) ?? '',
        ...(str(each.priority) ? { priority: str(each.priority) } : {}),
      }));
      return [entry(at, { kind: 'plan', entries })];
    }
    return [];
  }

  return {
    push(line) {
      const record = parse(line);
      if (!record) return [];
      const type = str(record.type) ?? '';
      const at = str(record.at);
      const message = record.message;
      if (type === 'stderr') {
        const text = typeof message === 'string' ? message : JSON.stringify(message);
        return [entry(at, { kind: 'stderr', text })];
      }
      if (!isRecord(message)) return [];
      if (type === 'session_notification') return notification(message, at);
      if (type === 'turn_started') {
        const turn = num(message.turn) ?? 0;
        const open = bar('turn', `turn ${turn}`, at);
        if (open) openTurns.set(turn, open);
        return [entry(at, { kind: 'turn', turn, status: 'started' })];
      }
      const ended = TURN_END[type];
      if (ended) {
        const turn = num(message.turn) ?? 0;
        finish(openTurns.get(turn), at, ended === 'completed');
        openTurns.delete(turn);
        const detail = str(message.stopReason) ?? str(message.message);
        return [entry(at, { kind: 'turn', turn, status: ended, ...(detail ? { detail } : {}) })];
      }
      if (type === 'hook_execution') {
        const hookName = str(message.hookName) ?? '';
        const status = str(message.status) ?? '';
        const exitCode = num(message.exitCode);
        let hookSeq: number | undefined;
        if (status === 'started') {
          hookSeq = hooksStarted++;
          hookSeqOf.set(hookName, hookSeq);
          const open = bar('hook', hookName, at);
          if (open) openHooks.set(hookName, open);
        } else {
          hookSeq = hookSeqOf.get(hookName);
          const open = openHooks.get(hookName);
          openHooks.delete(hookName);
          const durationMs = num(message.durationMs);
          if (open) finish(open, at, status === 'completed');
          else if (at) {
            // A hook that never ran (one failed record): a bar of its duration, if any.
            const start = new Date(Date.parse(at) - (durationMs ?? 0)).toISOString();
            bar('hook', hookName, start, at, status === 'completed' ? 'succeeded' : 'failed');
          }
        }
        return [
          entry(at, {
            kind: 'hook',
            hookName,
            status,
            ...(hookSeq === undefined ? {} : { hookSeq }),
            ...(exitCode === undefined ? {} : { exitCode }),
          }),
        ];
      }
      if (type === 'hook_output') {
        const hookName = str(message.hookName) ?? '';
        const hookSeq = num(message.seq) ?? hookSeqOf.get(hookName) ?? 0;
        const text = str(message.text) ?? '';
        if (options.keepHookOutput) {
          const parts = hookOutputs.get(hookSeq) ?? [];
          parts.push(text);
          hookOutputs.set(hookSeq, parts);
        }
        return [entry(at, { kind: 'hook_output', hookName, hookSeq, text })];
      }
      if (type === 'git_workspace') {
        const step = str(message.step) ?? '';
        const status = str(message.status) ?? '';
        const detail = str(message.detail);
        const durationMs = num(message.durationMs) ?? 0;
        if (at) {
          const start = new Date(Date.parse(at) - durationMs).toISOString();
          bar('git', `git ${step}`, start, at, status === 'failed' ? 'failed' : 'succeeded');
        }
        return [entry(at, { kind: 'git', step, status, ...(detail ? { detail } : {}) })];
      }
      return [];
    },
    elided(bytes) {
      return entry(undefined, { kind: 'elided', bytes });
    },
    timeline: () => bars.map((each) => ({ ...each })),
    hookOutput(seq) {
      const parts = hookOutputs.get(seq);
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
