/**
 * A hook's output, cut into `hook_output` records as it arrives: whole lines, a partial line
 * after a quiet spell, and a line too long for one record in several. Only the current partial
 * line is kept, so a hook that prints a gigabyte costs a record's worth of memory.
 */

/** A record holds at most this many UTF-16 code units of text (16 KiB). */
export const HOOK_OUTPUT_RECORD_CHARS = 16 * 1024;
/** A partial line is flushed after this much quiet ... */
export const HOOK_OUTPUT_QUIET_MS = 200;
/** ... or once it has waited this long (a progress bar that redraws with `\r` never rests). */
export const HOOK_OUTPUT_MAX_DELAY_MS = 1000;

export interface OutputStreamOptions {
  /** Called with each record's text, in order; their concatenation is the whole output. */
  onText: (text: string) => void;
  /**
   * How many trailing characters of `text` to keep back when it is cut anywhere but at its
   * end of output: the runner's redactor answers the length of the longest suffix that begins
   * a secret value, so a secret written in two pieces still reaches the redactor whole.
   * It must answer less than text.length + 1 and stay small (a secret's length).
   */
  holdBack?: (text: string) => number;
  quietMs?: number;
  maxDelayMs?: number;
  recordChars?: number;
}

export interface OutputStream {
  push(chunk: string): void;
  /** Flush everything still held (the hook ended) and stop the timers. */
  end(): void;
}

/** Never cut between the halves of a surrogate pair. */
function safeCut(text: string, at: number): number {
  if (at <= 0 || at >= text.length) return at;
  const unit = text.charCodeAt(at - 1);
  return unit >= 0xd800 && unit <= 0xdbff ? at - 1 : at;
}

export function createOutputStream(options: OutputStreamOptions): OutputStream {
  const limit = options.recordChars ?? HOOK_OUTPUT_RECORD_CHARS;
  const quietMs = options.quietMs ?? HOOK_OUTPUT_QUIET_MS;
  const maxDelayMs = options.maxDelayMs ?? HOOK_OUTPUT_MAX_DELAY_MS;
  const holdBack = options.holdBack ?? (() => 0);
  /** Output not yet emitted: less than one record, plus at most a secret's length held. */
  let pending = '';
  let quiet: NodeJS.Timeout | undefined;
  let overdue: NodeJS.Timeout | undefined;
  let ended = false;

  const stopTimers = (): void => {
    if (quiet) clearTimeout(quiet);
    if (overdue) clearTimeout(overdue);
    quiet = undefined;
    overdue = undefined;
  };

  /** Emit the first `length` units of pending, less what may begin a secret. */
  const emitUpTo = (length: number): void => {
    let cut = safeCut(pending, length);
    const head = pending.slice(0, cut);
    cut -= Math.min(Math.max(holdBack(head), 0), head.length);
    cut = safeCut(pending, cut);
    if (cut <= 0) return;
    const text = pending.slice(0, cut);
    pending = pending.slice(cut);
    options.onText(text);
  };

  /** The whole lines pending, in records of at most `limit`; a longer line in pieces. */
  const drain = (): void => {
    for (;;) {
      const newline = pending.lastIndexOf('\n', limit - 1);
      if (newline >= 0) {
        const before = pending.length;
        emitUpTo(newline + 1);
        // Everything held back: the rest waits for more output (or the end).
        if (pending.length === before) return;
        continue;
      }
      if (pending.length < limit) return;
      const before = pending.length;
      emitUpTo(limit);
      if (pending.length === before) return;
    }
  };

  const flushPartial = (): void => {
    stopTimers();
    if (pending !== '') emitUpTo(pending.length);
    armTimers();
  };

  function armTimers(): void {
    if (ended || pending === '') return;
    if (quiet) clearTimeout(quiet);
    quiet = setTimeout(flushPartial, quietMs);
    quiet.unref();
    if (!overdue) {
      overdue = setTimeout(flushPartial, maxDelayMs);
      overdue.unref();
    }
  }

  return {
    push(chunk) {
      if (ended || chunk === '') return;
      pending += chunk;
      drain();
      if (pending === '') stopTimers();
      else armTimers();
    },
    end() {
      if (ended) return;
      ended = true;
      stopTimers();
      // At the end nothing can complete a secret any more: what is held goes out as it is.
      while (pending !== '') {
        const cut = safeCut(pending, Math.min(pending.length, limit)) || pending.length;
        options.onText(pending.slice(0, cut));
        pending = pending.slice(cut);
      }
    },
  };
}
