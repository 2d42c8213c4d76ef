import { escapeCell } from './escape.js';

/**
 * A table as `kubectl get` prints it: upper-case headers, columns left-aligned and separated
 * by three spaces (its tabwriter's padding), no trailing spaces, `<none>` for an empty cell.
 */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const cells = rows.map((row) =>
    headers.map((_, index) => {
      const value = escapeCell(row[index] ?? '');
      return value === '' ? '<none>' : value;
    }),
  );
  const widths = headers.map((header, index) =>
    Math.max(header.length, ...cells.map((row) => [...(row[index] ?? '')].length)),
  );
  const line = (row: readonly string[]): string =>
    row
      .map((cell, index) =>
        index === row.length - 1
          ? cell
          : cell + ' '.repeat((widths[index] ?? 0) - [...cell].length + 3),
      )
      .join('')
      .trimEnd();
  return [headers, ...cells].map((row) => `${line(row)}\n`).join('');
}
