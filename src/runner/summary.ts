import { isSlotErrorCode, type SlotErrorCode } from '../workflow/errors.js';
import type { HookExecutionMessage, HookName, RunSummary, TokenUsage } from '../workflow/events.js';

/**
 * The compact summary the runner writes to the termination message (the kubelet keeps at
 * most 4096 bytes of it). The controller reads it when a run Pod ends, so that a record
 * missed in the logs (a controller restart, a log rotated away) still reaches the status.
 */
export interface TerminationHook {
  name: HookName;
  status: HookExecutionMessage['status'];
  exitCode: number | null;
  durationMs?: number;
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
  /** The last record of each hook that ran, in order. */
  hooks: TerminationHook[];
  /** How many hook_execution records the runner printed (the controller checks it saw them all). */
  records: number;
}

export const TERMINATION_LIMIT_BYTES = 4096;

/** Serializes the summary within the limit, shortening the error text when it must. */
export function encodeTerminationSummary(summary: TerminationSummary): string {
  let text = JSON.stringify(summary);
  let error = summary.error ?? '';
  while (Buffer.byteLength(text) > TERMINATION_LIMIT_BYTES && error.length > 0) {
    error = error.slice(0, Math.floor(error.length / 2));
    text = JSON.stringify({ ...summary, error: `${error}…` });
  }
  if (Buffer.byteLength(text) > TERMINATION_LIMIT_BYTES) {
    text = JSON.stringify({ ...summary, error: undefined, hooks: summary.hooks.slice(-8) });
  }
  return text;
}

export function parseTerminationSummary(text: string | undefined): TerminationSummary | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return null;
    const summary = value as Partial<TerminationSummary>;
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
      usage: summary.usage,
      hooks: Array.isArray(summary.hooks) ? summary.hooks : [],
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
  const last = new Map<HookName, TerminationHook>();
  for (const record of options.hooks) {
    last.set(record.hookName, {
      name: record.hookName,
      status: record.status,
      exitCode: record.exitCode ?? null,
      ...(record.durationMs === undefined ? {} : { durationMs: record.durationMs }),
    });
  }
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
    hooks: [...last.values()],
    records: options.hooks.length,
  };
}
