import { parseTokenUsage } from '../workflow/usage-record.js';
import { isSlotErrorCode, type SlotErrorCode } from '../workflow/errors.js';
import {
  HOOK_NAMES,
  type HookExecutionMessage,
  type HookName,
  type RunSummary,
  type TokenUsage,
} from '../workflow/events.js';

/**
 * The compact summary the runner writes to the termination message (the kubelet keeps at
 * most 4096 bytes of it). The controller reads it when a run Pod ends, so that a record
 * missed in the logs (a controller restart, an outage, a log lost with its node) still
 * reaches the status and the Events: the trail lists every hook record the runner printed,
 * in order, without the output.
 */
export interface TerminationRecord {
  /** The record's position among the Pod's hook records (it names the record's Event). */
  seq: number;
  name: HookName;
  status: HookExecutionMessage['status'];
  exitCode: number | null;
  durationMs?: number;
  /** A failed record's error, up to its first colon ("hook timed out after 5000ms"). */
  error?: string;
}

export interface TerminationSummary {
  v: 1;
  slot: number;
  succeeded: boolean;
  /** Stable failure code: hook_failed, hook_timed_out, acp_turn_failed, input_digest_mismatch … */
  errorCode?: SlotErrorCode;
  error?: string;
  cancelled?: boolean;
  turns: number;
  usage?: TokenUsage;
  /** Every hook record the runner printed, in order (empty when they did not fit). */
  trail: TerminationRecord[];
  /** How many hook_execution records the runner printed (the controller checks it saw them all). */
  records: number;
}

/** A trail entry on the wire: [hook, status, exit code, duration ms, error head], position implied. */
type WireRecord = [HookName, HookExecutionMessage['status'], number | null, number | null, string?];

/** Longest error head a trail entry keeps: enough to tell a timeout from a kill. */
const ERROR_HEAD_LIMIT = 60;

export const TERMINATION_LIMIT_BYTES = 4096;

function toWire(
  summary: TerminationSummary,
  error: string | undefined,
  withTrail: boolean,
): string {
  const { trail, ...rest } = summary;
  const wire: WireRecord[] = withTrail
    ? trail.map((record): WireRecord => {
        const { name, status, exitCode } = record;
        const durationMs = record.durationMs ?? null;
        return record.error === undefined
          ? [name, status, exitCode, durationMs]
          : [name, status, exitCode, durationMs, record.error];
      })
    : [];
  return JSON.stringify({ ...rest, error, trail: wire });
}

/** Serializes the summary within the limit, shortening the error text, then the trail, when it must. */
export function encodeTerminationSummary(summary: TerminationSummary): string {
  const full = summary.error ?? '';
  let kept = full.length;
  let error = summary.error;
  let text = toWire(summary, error, true);
  while (Buffer.byteLength(text) > TERMINATION_LIMIT_BYTES && kept > 0) {
    kept = Math.floor(kept / 2);
    error = kept > 0 ? `${full.slice(0, kept)}…` : undefined;
    text = toWire(summary, error, true);
  }
  if (Buffer.byteLength(text) > TERMINATION_LIMIT_BYTES) text = toWire(summary, error, false);
  return text;
}

const RECORD_STATUSES: readonly string[] = ['started', 'completed', 'failed'];

function parseTrail(value: unknown): TerminationRecord[] {
  if (!Array.isArray(value)) return [];
  const trail: TerminationRecord[] = [];
  for (const [seq, entry] of value.entries()) {
    if (!Array.isArray(entry)) return [];
    const [name, status, exitCode, durationMs, error] = entry as unknown[];
    if (
      typeof name !== 'string' ||
      !(HOOK_NAMES as readonly string[]).includes(name) ||
      typeof status !== 'string' ||
      !RECORD_STATUSES.includes(status)
    ) {
      return [];
    }
    trail.push({
      seq,
      name: name as HookName,
      status: status as HookExecutionMessage['status'],
      exitCode: typeof exitCode === 'number' ? exitCode : null,
      ...(typeof durationMs === 'number' ? { durationMs } : {}),
      ...(typeof error === 'string' ? { error: error.slice(0, ERROR_HEAD_LIMIT) } : {}),
    });
  }
  return trail;
}

/** The last record of each hook in the trail, in the order they ran. */
export function lastHookRecords(summary: TerminationSummary): TerminationRecord[] {
  const last = new Map<HookName, TerminationRecord>();
  for (const record of summary.trail) {
    last.delete(record.name);
    last.set(record.name, record);
  }
  return [...last.values()];
}

export function parseTerminationSummary(text: string | undefined): TerminationSummary | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const summary = value as Partial<Record<keyof TerminationSummary, unknown>>;
    if (summary.v !== 1 || typeof summary.succeeded !== 'boolean') return null;
    // A code this build does not know (from a runner of another version) reads as run_failed,
    // and the message still names it when the summary carries no error text.
    const code: unknown = summary.errorCode;
    const unknownCode = typeof code === 'string' && !isSlotErrorCode(code) ? code : undefined;
    const error = typeof summary.error === 'string' ? summary.error : undefined;
    return {
      v: 1,
      slot: typeof summary.slot === 'number' ? summary.slot : 0,
      succeeded: summary.succeeded,
      errorCode: isSlotErrorCode(code)
        ? code
        : unknownCode !== undefined
          ? 'run_failed'
          : undefined,
      error: error ?? unknownCode,
      cancelled: summary.cancelled === true,
      turns: typeof summary.turns === 'number' ? summary.turns : 0,
      usage: parseTokenUsage(summary.usage),
      trail: parseTrail(summary.trail),
      records: typeof summary.records === 'number' ? summary.records : 0,
    };
  } catch {
    return null;
  }
}

/** Builds the summary of one slot from the lifecycle's RunSummary and the hook records. */
export function summarizeSlot(options: {
  slot: number;
  summary: RunSummary | null;
  hooks: HookExecutionMessage[];
  cancelled: boolean;
  failure?: { code: SlotErrorCode; message: string };
}): TerminationSummary {
  const slotSummary = options.summary?.slots.find((entry) => entry.slot === options.slot);
  const trail = options.hooks.map((record, seq): TerminationRecord => ({
    seq,
    name: record.hookName,
    status: record.status,
    exitCode: record.exitCode ?? null,
    ...(record.durationMs === undefined ? {} : { durationMs: record.durationMs }),
    ...(record.status === 'failed' && record.error
      ? { error: (record.error.split(':')[0] ?? '').slice(0, ERROR_HEAD_LIMIT) }
      : {}),
  }));
  const failure =
    options.failure ??
    (slotSummary && !slotSummary.succeeded
      ? { code: slotSummary.errorCode ?? 'run_failed', message: slotSummary.error ?? '' }
      : undefined);
  return {
    v: 1,
    slot: options.slot,
    succeeded: !failure && !options.cancelled && (slotSummary?.succeeded ?? false),
    ...(failure ? { errorCode: failure.code, error: failure.message } : {}),
    ...(options.cancelled ? { cancelled: true } : {}),
    turns: slotSummary?.turns ?? 0,
    ...(slotSummary?.usage ? { usage: slotSummary.usage } : {}),
    trail,
    records: options.hooks.length,
  };
}
