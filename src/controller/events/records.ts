import type {
  GitWorkspaceMessage,
  HookExecutionMessage,
  HookName,
  LorenzEvent,
  TokenUsage,
} from '../../workflow/events.js';
import { HOOK_NAMES } from '../../workflow/events.js';

/**
 * The runner's stdout is one JSON object per line. This module turns those lines into
 * records, numbers the hook records (the number names their Event, so a replay of the same
 * log after a controller restart names the same Events), and folds them into status.
 */

export interface HookRecord {
  /** 0-based position among the hook_execution records of this Pod's log. */
  seq: number;
  message: HookExecutionMessage;
  /**
   * Rebuilt from the Pod's termination message because its log could not be read: the
   * record has no command and no output.
   */
  recovered?: boolean;
}

/** A git_workspace record, numbered among this Pod's git records as hook records are. */
export interface GitRecord {
  seq: number;
  message: GitWorkspaceMessage;
}

export interface HookStatusEntry {
  slot: number;
  name: HookName;
  status: HookExecutionMessage['status'];
  exitCode: number | null;
  durationMs?: number;
  output?: string;
  outputTruncated?: boolean;
  error?: string | null;
  errorTruncated?: boolean;
}

export interface SlotProgress {
  turns: number;
  usage?: TokenUsage;
  completed: boolean;
}

/** Parses one line; null for blank lines and anything that is not a Lorenz record. */
export function parseRecordLine(line: string): LorenzEvent | null {
  const text = line.trim();
  if (!text.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const record = value as { type?: unknown };
    return typeof record.type === 'string' ? (value as LorenzEvent) : null;
  } catch {
    return null;
  }
}

const isHookMessage = (message: unknown): message is HookExecutionMessage => {
  if (typeof message !== 'object' || message === null) return false;
  const candidate = message as Partial<HookExecutionMessage>;
  return (
    typeof candidate.hookName === 'string' &&
    (HOOK_NAMES as readonly string[]).includes(candidate.hookName) &&
    (candidate.status === 'started' ||
      candidate.status === 'completed' ||
      candidate.status === 'failed')
  );
};

const GIT_STEPS: readonly string[] = ['clone', 'branch', 'merge_up', 'setup', 'push', 'teardown'];

const isGitMessage = (message: unknown): message is GitWorkspaceMessage => {
  if (typeof message !== 'object' || message === null) return false;
  const candidate = message as Partial<GitWorkspaceMessage>;
  return (
    typeof candidate.step === 'string' &&
    GIT_STEPS.includes(candidate.step) &&
    (candidate.status === 'completed' ||
      candidate.status === 'failed' ||
      candidate.status === 'warning') &&
    typeof candidate.detail === 'string'
  );
};

/**
 * A line splitter for a byte stream that numbers hook and git records as they come (each
 * kind on its own count). Feed it chunks; it calls `onRecord` for every record, `onHook` for
 * every hook record and `onGit` for every git_workspace record, with its seq.
 */
export function createRecordParser(handlers: {
  onRecord?: (record: LorenzEvent) => void;
  onHook?: (hook: HookRecord) => void;
  onGit?: (git: GitRecord) => void;
}): { push(chunk: string): void; end(): void; readonly hookCount: number } {
  let pending = '';
  let hookCount = 0;
  let gitCount = 0;
  const handleLine = (line: string): void => {
    const record = parseRecordLine(line);
    if (!record) return;
    handlers.onRecord?.(record);
    if (record.type === 'hook_execution' && isHookMessage(record.message)) {
      handlers.onHook?.({ seq: hookCount, message: record.message });
      hookCount += 1;
    } else if (record.type === 'git_workspace' && isGitMessage(record.message)) {
      handlers.onGit?.({ seq: gitCount, message: record.message });
      gitCount += 1;
    }
  };
  return {
    push(chunk: string): void {
      pending += chunk;
      let newline = pending.indexOf('\n');
      while (newline >= 0) {
        handleLine(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
        newline = pending.indexOf('\n');
      }
    },
    end(): void {
      if (pending.length > 0) handleLine(pending);
      pending = '';
    },
    get hookCount(): number {
      return hookCount;
    },
  };
}

export function hookStatusEntry(message: HookExecutionMessage, slot: number): HookStatusEntry {
  const entry: HookStatusEntry = {
    slot: message.slot ?? slot,
    name: message.hookName,
    status: message.status,
    exitCode: message.exitCode ?? null,
  };
  if (message.durationMs !== undefined) entry.durationMs = message.durationMs;
  if (message.output !== undefined) entry.output = message.output;
  if (message.outputTruncated !== undefined) entry.outputTruncated = message.outputTruncated;
  if (message.error !== undefined) entry.error = message.error;
  if (message.errorTruncated !== undefined) entry.errorTruncated = message.errorTruncated;
  return entry;
}

const hookOrder = (name: HookName): number => HOOK_NAMES.indexOf(name);

/**
 * status.hooks with one entry per slot and hook, the latest record winning; entries sorted
 * by slot then lifecycle order so the status reads like the run.
 */
export function mergeHookEntries(
  current: readonly HookStatusEntry[],
  updates: readonly HookStatusEntry[],
): HookStatusEntry[] {
  const byKey = new Map<string, HookStatusEntry>();
  for (const entry of [...current, ...updates]) byKey.set(`${entry.slot}/${entry.name}`, entry);
  return [...byKey.values()].sort(
    (a, b) => a.slot - b.slot || hookOrder(a.name) - hookOrder(b.name),
  );
}

export type HookEventReason =
  'HookStarted' | 'HookSucceeded' | 'HookFailed' | 'HookTimedOut' | 'HookKilled';

export function hookEventReason(message: HookExecutionMessage): HookEventReason {
  if (message.status === 'started') return 'HookStarted';
  if (message.status === 'completed') return 'HookSucceeded';
  const error = message.error ?? '';
  if (error.startsWith('hook timed out')) return 'HookTimedOut';
  return error.startsWith('hook killed') ? 'HookKilled' : 'HookFailed';
}

export const EVENT_NOTE_LIMIT = 1024;

/** Cuts text to at most `limit` UTF-8 bytes, marking the cut. */
export function truncateBytes(text: string, limit: number): string {
  if (Buffer.byteLength(text) <= limit) return text;
  const marker = ' …';
  let cut = text.slice(0, limit);
  while (Buffer.byteLength(cut) + Buffer.byteLength(marker) > limit) cut = cut.slice(0, -1);
  return `${cut}${marker}`;
}

/** Says why a recovered record's Event shows no command or output. */
export const RECOVERED_NOTE =
  "recovered from the run Pod's termination message (its log could not be read); no output";

function exitText(message: HookExecutionMessage): string {
  const exit =
    message.exitCode === null || message.exitCode === undefined
      ? 'no exit code'
      : `exit ${message.exitCode}`;
  return message.durationMs === undefined ? exit : `${exit}, ${message.durationMs} ms`;
}

/** The Event note for a hook record: what ran, how it ended, and the start of its output. */
export function hookEventNote(
  message: HookExecutionMessage,
  slot: number,
  recovered = false,
): string {
  const where = `slot ${message.slot ?? slot}`;
  if (recovered) {
    const exit = message.status === 'started' ? '' : ` (${exitText(message)})`;
    return `${message.hookName} ${message.status} in ${where}${exit}: ${RECOVERED_NOTE}`;
  }
  if (message.status === 'started') {
    return truncateBytes(
      `${message.hookName} started in ${where}: ${message.command}`,
      EVENT_NOTE_LIMIT,
    );
  }
  const detail =
    message.status === 'failed' ? (message.error ?? message.output ?? '') : (message.output ?? '');
  const head = `${message.hookName} ${message.status} in ${where} (${exitText(message)})`;
  return truncateBytes(detail.trim() ? `${head}: ${detail.trim()}` : head, EVENT_NOTE_LIMIT);
}

export type GitEventReason = 'GitWorkspace' | 'GitWorkspaceWarning';

/** A step done is news; one undone or failed is a warning (the run may still go on). */
export function gitEvent(message: GitWorkspaceMessage): {
  reason: GitEventReason;
  type: 'Normal' | 'Warning';
  note: string;
} {
  const completed = message.status === 'completed';
  // The runner redacted the detail already: a credential never reaches this far.
  const detail = message.detail.trim();
  const head = `${message.step} ${message.status}`;
  return {
    reason: completed ? 'GitWorkspace' : 'GitWorkspaceWarning',
    type: completed ? 'Normal' : 'Warning',
    note: truncateBytes(detail ? `${head}: ${detail}` : head, EVENT_NOTE_LIMIT),
  };
}
