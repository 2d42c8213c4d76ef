/**
 * Keeps the first `limit` characters (code points) of a command's output and only counts the
 * rest, so a hook that prints gigabytes costs a few KiB of memory, not gigabytes.
 */
export interface OutputCapture {
  push(chunk: string): void;
  /** The characters kept. */
  readonly text: string;
  /** How many characters were seen but not kept. */
  readonly dropped: number;
}

/** Code points in a string: a surrogate pair is one. */
export function codePoints(text: string): number {
  let count = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    // A high surrogate followed by a low one is one character: skip the low one.
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index += 1;
    }
    count += 1;
  }
  return count;
}

export function createOutputCapture(limit = Infinity): OutputCapture {
  const parts: string[] = [];
  let kept = 0;
  let dropped = 0;
  return {
    push(chunk) {
      const room = limit - kept;
      if (room <= 0) {
        dropped += codePoints(chunk);
      } else if (chunk.length <= room) {
        // Fewer UTF-16 units than room means fewer characters too: all of it fits.
        parts.push(chunk);
        kept += codePoints(chunk);
      } else {
        // A chunk is at most a pipe read (64 KiB): splitting it into characters is cheap.
        const characters = Array.from(chunk);
        const taken = characters.slice(0, room);
        parts.push(taken.join(''));
        kept += taken.length;
        dropped += characters.length - taken.length;
      }
    },
    get text() {
      return parts.join('');
    },
    get dropped() {
      return dropped;
    },
  };
}

/**
 * The output as Lorenz reports it (docs/design.md#kept-to-the-letter): without its final newline. A
 * newline that ends a chunk is held back until more output shows it was not the last one, so
 * neither the kept text nor the count of dropped characters includes it.
 */
export function withoutFinalNewline(inner: OutputCapture): OutputCapture {
  let held = false;
  return {
    push(chunk) {
      if (chunk === '') return;
      if (held) inner.push('\n');
      held = chunk.endsWith('\n');
      inner.push(held ? chunk.slice(0, -1) : chunk);
    },
    get text() {
      return inner.text;
    },
    get dropped() {
      return inner.dropped;
    },
  };
}

/**
 * The capture, and every chunk told to `listener` too (a hook's output streamed to the log).
 * A listener that throws loses that chunk, never the capture or the command.
 */
export function withListener(
  inner: OutputCapture,
  listener: ((chunk: string) => void) | undefined,
): OutputCapture {
  if (!listener) return inner;
  return {
    push(chunk) {
      inner.push(chunk);
      if (chunk === '') return;
      try {
        listener(chunk);
      } catch {
        // The command's result does not depend on who watches its output.
      }
    },
    get text() {
      return inner.text;
    },
    get dropped() {
      return inner.dropped;
    },
  };
}
