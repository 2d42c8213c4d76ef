// docs/cli.md's error table, generated from the codes themselves: every code, what `lorenz
// run` exits with, the IssueRun reason it becomes, and what it means.
import { exitCodeForError } from '../../src/cli/exit-codes.js';
import { reasonForErrorCode } from '../../src/controller/issuerun/pod-status.js';
import {
  ERROR_CODE_MEANINGS,
  isLorenzErrorCode,
  type SlotErrorCode,
} from '../../src/workflow/errors.js';

const BEGIN_MARKER = '<!-- BEGIN GENERATED: error-codes (npm run docs) -->';
const END_MARKER = '<!-- END GENERATED: error-codes -->';

export function renderErrorCodes(): string {
  const lines = [
    BEGIN_MARKER,
    '| code | `lorenz` exit code | IssueRun reason | meaning |',
    '| --- | --- | --- | --- |',
  ];
  for (const [code, meaning] of Object.entries(ERROR_CODE_MEANINGS) as [SlotErrorCode, string][]) {
    // Codes of the engine's errors exit as the CLI maps them; the other slot outcomes are a
    // failed run (1).
    const exit = isLorenzErrorCode(code) ? exitCodeForError(code) : 1;
    lines.push(`| \`${code}\` | ${exit} | \`${reasonForErrorCode(code)}\` | ${meaning} |`);
  }
  lines.push(END_MARKER);
  return lines.join('\n');
}

/** Replace the generated block of a document; throws when the markers are missing. */
export function withErrorCodes(document: string): string {
  const start = document.indexOf(BEGIN_MARKER);
  const end = document.indexOf(END_MARKER);
  if (start < 0 || end < start) throw new Error('the document has no error-codes markers');
  return document.slice(0, start) + renderErrorCodes() + document.slice(end + END_MARKER.length);
}
