import { boundValue } from './bounded.js';
import type { acp } from './client.js';

/** Emit a pending message after this much quiet, so a live log does not lag a whole turn. */
const QUIET_FLUSH_MS = 500;
/** ...or once it is this long. */
const MAX_PENDING_CHARS = 8192;

export interface UpdateForwarder {
  push(turn: number, update: acp.SessionUpdate): void;
  /** Emit whatever is pending (at the end of a turn). */
  flush(): void;
}

interface Pending {
  turn: number;
  kind: string;
  text: string;
}

/**
 * Turn session updates into `session_notification` messages. Streamed message chunks are
 * coalesced (one event per message rather than one per token); every other update goes out
 * as it came. An update whose JSON is over 1 MiB has its long strings cut, each marked, and
 * the message says how many characters went (`truncated`).
 */
export function createUpdateForwarder(
  emitMessage: (message: Record<string, unknown>) => void,
): UpdateForwarder {
  const emit = ({ turn, update }: { turn: number; update: unknown }): void => {
    const bounded = boundValue(update);
    if (bounded.truncated === 0) return emitMessage({ turn, update });
    const kind = (update as { sessionUpdate?: unknown }).sessionUpdate;
    emitMessage({
      turn,
      update: bounded.value ?? { sessionUpdate: kind },
      truncated: bounded.truncated,
    });
  };
  let pending: Pending | undefined;
  let timer: NodeJS.Timeout | undefined;

  const flush = (): void => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    const { turn, kind, text } = pending;
    pending = undefined;
    emit({ turn, update: { sessionUpdate: kind, content: { type: 'text', text } } });
  };

  const push = (turn: number, update: acp.SessionUpdate): void => {
    const text = chunkText(update);
    if (text === undefined) {
      flush();
      emit({ turn, update });
      return;
    }
    if (pending && (pending.kind !== update.sessionUpdate || pending.turn !== turn)) flush();
    pending = pending ?? { turn, kind: update.sessionUpdate, text: '' };
    pending.text += text;
    if (pending.text.length >= MAX_PENDING_CHARS) {
      flush();
      return;
    }
    if (timer) clearTimeout(timer);
    timer = setTimeout(flush, QUIET_FLUSH_MS);
    timer.unref();
  };

  return { push, flush };
}

function chunkText(update: acp.SessionUpdate): string | undefined {
  if (
    (update.sessionUpdate === 'agent_message_chunk' ||
      update.sessionUpdate === 'agent_thought_chunk' ||
      update.sessionUpdate === 'user_message_chunk') &&
    update.content.type === 'text'
  ) {
    return update.content.text;
  }
  return undefined;
}
