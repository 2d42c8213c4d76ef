/**
 * Quote a value as one POSIX shell word: wrapped in single quotes, each `'` written as
 * `'\''`. Inside single quotes the shell interprets nothing, so `$()`, backticks, newlines
 * and any other bytes reach the command unchanged. Empty text becomes `''`.
 */
export function shellEscape(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
