/**
 * Text from a run (an agent's message, a hook's output, a tool's result) is shown, never
 * obeyed: every control character but newline and tab, and every C1 control and bidi
 * override, is written as a visible escape (`\x1b`, `\r`, `\u202e`), so an ANSI sequence in a
 * hook's output cannot move the cursor, retitle the terminal or hide the lines before it.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\r': '\\r', '\b': '\\b', '\f': '\\f', '\v': '\\v' };

export function escapeText(text: string): string {
  return text.replace(UNSAFE, (char) => {
    const named = NAMED[char];
    if (named) return named;
    const code = char.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, '0')}`
      : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** One line of a table or a field: newlines and tabs escaped too. */
export const escapeCell = (text: string): string =>
  escapeText(text).replace(/\n/g, '\\n').replace(/\t/g, '\\t');
