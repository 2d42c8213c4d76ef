/**
 * A single record of the agent's transcript is at most 1 MiB of JSON: a tool call whose
 * result is a 200 MB file read would otherwise be a 200 MB log line, which the controller, the
 * archive and `lorenz logs` each hold whole. What is over is cut from its longest strings.
 */

/** The largest serialized update a record carries (UTF-16 code units of its JSON). */
export const MAX_UPDATE_CHARS = 1024 * 1024;

/** Room kept for the record around the update (turn, type, the `truncated` count). */
const ENVELOPE_CHARS = 256;

const marker = (dropped: number): string => `\n[truncated ${dropped} chars]`;

/** The first `length` units of text, never ending inside a surrogate pair. */
function head(text: string, length: number): string {
  const unit = text.charCodeAt(length - 1);
  return text.slice(0, unit >= 0xd800 && unit <= 0xdbff ? length - 1 : length);
}

/** Every string longer than `cap` cut to `cap` with a marker; counts what was dropped. */
function cutStrings(value: unknown, cap: number): { value: unknown; dropped: number } {
  let dropped = 0;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') {
      if (node.length <= cap) return node;
      const kept = head(node, cap);
      dropped += node.length - kept.length;
      return `${kept}${marker(node.length - kept.length)}`;
    }
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, walk(child)]));
  };
  return { value: walk(value), dropped };
}

function longestString(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value))
    return value.reduce((most: number, each) => Math.max(most, longestString(each)), 0);
  if (value === null || typeof value !== 'object') return 0;
  return Object.values(value).reduce(
    (most: number, each) => Math.max(most, longestString(each)),
    0,
  );
}

export interface Bounded<T> {
  value: T;
  /** UTF-16 code units dropped; 0 when the value fit. */
  truncated: number;
}

/**
 * The value as it is when its JSON fits in `limit`; otherwise with its long strings cut to the
 * largest common length that fits (each cut marked `[truncated N chars]`). A value that does
 * not fit even with every string emptied (a huge array of numbers) is replaced by null.
 */
export function boundValue<T>(value: T, limit = MAX_UPDATE_CHARS): Bounded<T | null> {
  const size = JSON.stringify(value)?.length ?? 0;
  if (size <= limit) return { value, truncated: 0 };
  const room = limit - ENVELOPE_CHARS;
  let low = 0;
  let high = longestString(value);
  let best: { value: unknown; dropped: number } | undefined;
  // The largest cap whose result fits: about twenty passes over a value over 1 MiB.
  while (low <= high) {
    const cap = Math.floor((low + high) / 2);
    const cut = cutStrings(value, cap);
    if ((JSON.stringify(cut.value)?.length ?? 0) <= room) {
      best = cut;
      low = cap + 1;
    } else {
      high = cap - 1;
    }
  }
  if (!best) return { value: null, truncated: size };
  return { value: best.value as T, truncated: best.dropped };
}

/** A text cut to `limit` units with the marker: an agent's stderr line, say. */
export function boundText(text: string, limit = MAX_UPDATE_CHARS): string {
  if (text.length <= limit) return text;
  const kept = head(text, limit);
  return `${kept}${marker(text.length - kept.length)}`;
}
