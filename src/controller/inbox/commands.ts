import { INBOX_COMMENT_MARKER, INBOX_LIMITS } from '../../api/inbox.js';

/**
 * The commands a person writes on the issue for the inbox (docs/approvals.md). A command only
 * counts where it renders as plain text at the start of a line: the request comment Lorenz
 * posts carries the agent's own text, and a reply that quotes it, or code that shows an
 * example, must never approve anything.
 */
export type InboxCommand =
  | { kind: 'approve'; always: boolean; requestId: string | null }
  | { kind: 'deny'; reason: string | null; requestId: string | null }
  | { kind: 'steer'; text: string }
  | { kind: 'stop' };

/** The ids the runner makes (`a<attempt>-s<slot>-<n>`); any other word after /approve is prose. */
export const COMMAND_REQUEST_ID = /^a\d+-s\d+-\d+$/i;

/** How a line renders: only `text` lines may hold a command. */
type LineKind = 'text' | 'blank' | 'code' | 'quote' | 'html' | 'span';

interface Line {
  text: string;
  kind: LineKind;
}

/** Stands for hidden HTML comment text, so a line that began inside one never reads as a command. */
const HIDDEN = '\u0000';
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const HEADING = /^ {0,3}#{1,6}(\s|$)/;
const QUOTE = /^ {0,3}>/;
const COMMAND = /^[ \t]*\/(approve|deny|steer|stop)(?=\s|$)(.*)$/i;

/** Columns of leading white space (a tab to the next multiple of 4), as Markdown counts them. */
function indentOf(line: string): number {
  let columns = 0;
  for (const char of line) {
    if (char === ' ') columns += 1;
    else if (char === '\t') columns += 4 - (columns % 4);
    else break;
  }
  return columns;
}

/** Each HTML comment (closed or running to the end) becomes HIDDEN, its line breaks kept. */
function hideComments(body: string): string {
  return body
    .replaceAll(HIDDEN, '')
    .replace(/<!--[\s\S]*?(-->|$)/g, (comment) => comment.replace(/[^\n]+/g, HIDDEN));
}

interface Fence {
  char: string;
  length: number;
}

function fenceOpening(line: string): Fence | null {
  const match = FENCE_OPEN.exec(line);
  const run = match?.[1];
  if (run === undefined) return null;
  // A backtick fence's info string may not hold a backtick (CommonMark): that is inline code.
  if (run.startsWith('`') && (match?.[2] ?? '').includes('`')) return null;
  return { char: run.charAt(0), length: run.length };
}

function closesFence(line: string, fence: Fence): boolean {
  const run = FENCE_CLOSE.exec(line)?.[1];
  return run !== undefined && run.startsWith(fence.char) && run.length >= fence.length;
}

/** The block-level kind of every line: fences, indented code, quotes (and their lazy lines). */
function blockKinds(lines: readonly string[]): LineKind[] {
  const kinds: LineKind[] = [];
  let fence: Fence | null = null;
  let previous: LineKind | 'heading' | 'start' = 'start';
  for (const line of lines) {
    let kind: LineKind;
    if (fence !== null) {
      if (closesFence(line, fence)) fence = null;
      kind = 'code';
    } else if (line.trim() === '') {
      kind = previous === 'code' ? 'code' : 'blank';
    } else if ((fence = fenceOpening(line)) !== null) {
      kind = 'code';
    } else if (indentOf(line) >= 4 && previous !== 'text' && previous !== 'quote') {
      // Indented code cannot interrupt a paragraph; after a blank line or a block it starts.
      kind = 'code';
    } else if (QUOTE.test(line) || (previous === 'quote' && !HEADING.test(line))) {
      // A line right after a quoted paragraph continues the quote (a lazy continuation line).
      kind = 'quote';
    } else if (line.trimStart().startsWith(HIDDEN)) {
      kind = 'html';
    } else {
      kind = 'text';
    }
    kinds.push(kind);
    previous = kind === 'text' && HEADING.test(line) ? 'heading' : kind;
  }
  return kinds;
}

/** The [start, end) ranges of inline code spans in a paragraph's text (CommonMark's rule). */
function codeSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let i = 0;
  while (i < text.length) {
    const char = text.charAt(i);
    if (char === '\\') {
      i += 2;
      continue;
    }
    if (char !== '`') {
      i += 1;
      continue;
    }
    let run = 1;
    while (text.charAt(i + run) === '`') run += 1;
    const close = closingRun(text, i + run, run);
    if (close === -1) {
      i += run;
      continue;
    }
    spans.push([i, close + run]);
    i = close + run;
  }
  return spans;
}

/** Where the next run of exactly `run` backticks starts at or after `from`, or -1. */
function closingRun(text: string, from: number, run: number): number {
  let j = from;
  while (j < text.length) {
    if (text.charAt(j) !== '`') {
      j += 1;
      continue;
    }
    let length = 1;
    while (text.charAt(j + length) === '`') length += 1;
    if (length === run) return j;
    j += length;
  }
  return -1;
}

/** Marks the text lines that start inside a code span opened on an earlier line of the paragraph. */
function markSpans(lines: Line[]): void {
  let start = 0;
  while (start < lines.length) {
    if (lines[start]?.kind !== 'text') {
      start += 1;
      continue;
    }
    let end = start;
    while (lines[end]?.kind === 'text') end += 1;
    const paragraph = lines.slice(start, end);
    const spans = codeSpans(paragraph.map((line) => line.text).join('\n'));
    let offset = 0;
    for (const line of paragraph) {
      const first = offset + (line.text.length - line.text.trimStart().length);
      if (spans.some(([from, to]) => from < first && first < to)) line.kind = 'span';
      offset += line.text.length + 1;
    }
    start = end;
  }
}

function classify(body: string): Line[] {
  const texts = hideComments(body).split(/\r\n|\r|\n/);
  const kinds = blockKinds(texts);
  const lines = texts.map((text, i) => ({ text, kind: kinds[i] ?? 'text' }));
  markSpans(lines);
  return lines;
}

/** Cuts to at most `max` UTF-16 units without splitting a surrogate pair. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

function orNull(text: string, max: number): string | null {
  const trimmed = text.trim();
  return trimmed === '' ? null : clip(trimmed, max);
}

/** /approve [always] [id], in either order; words after them are prose. */
function approveCommand(rest: string): InboxCommand {
  let always = false;
  let requestId: string | null = null;
  for (const word of rest.trim().split(/\s+/).slice(0, 2)) {
    if (!always && word.toLowerCase() === 'always') always = true;
    else if (requestId === null && COMMAND_REQUEST_ID.test(word)) requestId = word.toLowerCase();
    else break;
  }
  return { kind: 'approve', always, requestId };
}

/** /deny [id] [reason]: the reason is the rest of the line. */
function denyCommand(rest: string): InboxCommand {
  const trimmed = rest.trim();
  const first = trimmed.split(/\s+/)[0] ?? '';
  const hasId = first !== '' && COMMAND_REQUEST_ID.test(first);
  const reason = hasId ? trimmed.slice(first.length) : trimmed;
  return {
    kind: 'deny',
    reason: orNull(reason, INBOX_LIMITS.reasonLength),
    requestId: hasId ? first.toLowerCase() : null,
  };
}

/** The text lines a /steer takes after its own: everything up to the next command, hidden text dropped. */
function steerText(first: string, following: readonly Line[]): string {
  const parts = [first.trimStart()];
  for (const line of following) {
    if (line.kind === 'html' && line.text.replaceAll(HIDDEN, '').trim() === '') continue;
    parts.push(line.text.replaceAll(HIDDEN, ''));
  }
  return clip(parts.join('\n').trim(), INBOX_LIMITS.steerLength);
}

function commandOf(line: Line): { word: string; rest: string } | null {
  if (line.kind !== 'text') return null;
  const match = COMMAND.exec(line.text);
  if (match === null) return null;
  return { word: (match[1] ?? '').toLowerCase(), rest: (match[2] ?? '').replaceAll(HIDDEN, '') };
}

/**
 * Commands of a comment, in order. A command is a line that starts (after spaces) with
 * /approve, /approve always, /deny [reason], /steer <text> (the rest of the line; following
 * non-command lines join it, up to the next command), /stop; an optional request id after
 * the word (`/approve a1-s0-2`, `/deny a1-s0-2 reason`). Not a command: inside fenced or
 * indented code, inline code spans, quotes (nested too), HTML comments. The command word is
 * case-insensitive; `/approved` or `/approvex` is not /approve. An empty /steer is none.
 */
export function parseInboxCommands(body: string): InboxCommand[] {
  const lines = classify(body);
  const commands: InboxCommand[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i];
    const command = line === undefined ? null : commandOf(line);
    if (command === null) continue;
    if (command.word === 'approve') commands.push(approveCommand(command.rest));
    else if (command.word === 'deny') commands.push(denyCommand(command.rest));
    else if (command.word === 'stop') commands.push({ kind: 'stop' });
    else {
      let end = i + 1;
      while (end < lines.length && commandOf(lines[end] as Line) === null) end += 1;
      const text = steerText(command.rest, lines.slice(i + 1, end));
      if (text !== '') commands.push({ kind: 'steer', text });
      i = end - 1;
    }
  }
  return commands;
}

/**
 * A reply as the answer to a question: quoted lines and the bot marker dropped, trimmed,
 * bounded to INBOX_LIMITS.answerLength.
 */
export function answerText(body: string): string {
  const kept = body
    .replaceAll(INBOX_COMMENT_MARKER, '')
    .split(/\r\n|\r|\n/)
    .filter((line) => !QUOTE.test(line));
  return clip(kept.join('\n').trim(), INBOX_LIMITS.answerLength);
}

/** Whether Lorenz wrote this comment (it starts with INBOX_COMMENT_MARKER). */
export function isInboxComment(body: string): boolean {
  return body.trimStart().startsWith(INBOX_COMMENT_MARKER);
}
