import { describe, expect, it } from 'vitest';
import { INBOX_COMMENT_MARKER, type InboxPending } from '../../../../src/api/inbox.js';
import { parseInboxCommands } from '../../../../src/controller/inbox/commands.js';
import {
  fenced,
  inlineCode,
  replyCommentText,
  requestCommentText,
  type ReplyKind,
} from '../../../../src/controller/inbox/comment-text.js';
import { eachNamedCase } from '../../../support/cases.js';

const permission = (over: Partial<InboxPending> = {}): InboxPending => ({
  id: 'a1-s0-2',
  kind: 'permission',
  slot: 0,
  attempt: 1,
  turn: 3,
  title: 'Run the tests',
  toolKind: 'execute',
  command: 'npm test',
  paths: ['src/a.ts'],
  options: [
    { optionId: 'o1', name: 'Allow once', kind: 'allow_once' },
    { optionId: 'o2', name: 'Reject', kind: 'reject_once' },
  ],
  ruleReason: 'commands need a person',
  rule: 2,
  askedAt: '2026-12-02T10:00:00Z',
  deadline: '2026-12-02T11:00:00Z',
  ...over,
});
const question = (over: Partial<InboxPending> = {}): InboxPending =>
  permission({ kind: 'question', title: 'Which?', message: 'Which colour?', options: [], ...over });
const context = { run: 'eng-1', approvers: [] as string[], onTimeout: 'deny' as const };

/** The text outside code blocks and code spans: what renders as Markdown. */
function rendered(text: string): string {
  return text.replace(/(`{3,})[^\n]*\n[\s\S]*?\n\1(?!`)/g, '').replace(/(`+)[\s\S]*?\1/g, '');
}

describe('requestCommentText', () => {
  it('starts with the marker, then a line break', () => {
    for (const p of [permission(), question()]) {
      expect(requestCommentText(p, context).startsWith(`${INBOX_COMMENT_MARKER}\n`)).toBe(true);
    }
  });

  it('says what a permission is about, how to answer, who may, and what a timeout does', () => {
    const text = requestCommentText(permission(), { ...context, approvers: ['alice', 'bob'] });
    for (const part of [
      'Run the tests',
      'npm test',
      '`src/a.ts`',
      'commands need a person',
      'rule 2',
      '`Allow once`',
      '`/approve`',
      '`/approve always`',
      '`/deny <reason>`',
      '`/approve a1-s0-2`',
      '`alice`',
      '`bob`',
      '`2026-12-02T11:00:00Z`',
      'it is denied',
    ]) {
      expect(text).toContain(part);
    }
    expect(requestCommentText(permission(), { ...context, onTimeout: 'allow' })).toContain(
      'it is allowed',
    );
    expect(text).not.toContain('Anyone');
    expect(requestCommentText(permission(), context)).toContain('Anyone who can comment');
  });

  it('asks a question with its message, a reply answers it', () => {
    const text = requestCommentText(question(), context);
    expect(text).toContain('Which colour?');
    expect(text).toContain('Reply to answer');
    expect(text).toContain('`/deny <reason>`');
    expect(text).toContain('times out');
  });

  it('keeps hostile backticks, HTML and commands inert', () => {
    const hostile = '```\n/approve\n````\n<img src=x onerror=alert(1)> @everyone\n~~~';
    const text = requestCommentText(
      permission({ title: hostile, command: hostile, ruleReason: hostile, paths: [hostile] }),
      { ...context, run: '`x`<b>', approvers: ['`a` <i>'] },
    );
    const outside = rendered(text);
    expect(outside).not.toContain('<img');
    expect(outside).not.toContain('<b>');
    expect(outside).not.toContain('<i>');
    expect(outside).not.toContain('@everyone');
    expect(parseInboxCommands(text)).toEqual([]);
    // The title's fence is longer than its longest backtick run (four).
    expect(text).toContain('`````text\n```\n/approve');
  });

  it('bounds 10 000 options and a 1 MB title', () => {
    const options = Array.from({ length: 10_000 }, (_, i) => ({
      optionId: `o${i}`,
      name: `option ${i}`,
      kind: 'allow_once',
    }));
    const text = requestCommentText(
      permission({ title: 'x'.repeat(1_000_000), options, optionsOmitted: 5 }),
      context,
    );
    expect(text.length).toBeLessThan(20_000);
    expect(text).toContain('`option 15`');
    expect(text).not.toContain('`option 16`');
    expect(text).toContain('- and 9989 more');
    expect(text).toContain(`${'x'.repeat(1024)}…`);
    expect(text).not.toContain('x'.repeat(1025));
  });
});

describe('replyCommentText', () => {
  const kinds: ReplyKind[] = [
    'approved',
    'approved_always',
    'denied',
    'answered',
    'timed_out',
    'not_approver',
    'already_decided',
    'no_request',
    'steer_received',
    'steering_off',
    'stopped',
    'decided_in_kubernetes',
    'steer_undelivered',
  ];

  it.each(kinds)('%s starts with the marker and keeps hostile names inert', (kind) => {
    const hostile = '`/approve`\n/approve <script>alert(1)</script> @all';
    const text = replyCommentText(kind, {
      requestId: 'a1-s0-2',
      title: hostile,
      by: hostile,
      reason: hostile,
      decidedBy: hostile,
      onTimeout: 'deny',
    });
    expect(text.startsWith(`${INBOX_COMMENT_MARKER}\n`)).toBe(true);
    expect(parseInboxCommands(text)).toEqual([]);
    expect(rendered(text)).not.toContain('<script>');
    expect(rendered(text)).not.toContain('@all');
  });

  it.each<[ReplyKind, Parameters<typeof replyCommentText>[1], string]>([
    ['approved', { requestId: 'a1-s0-2', by: 'alice' }, 'is approved by `alice`'],
    ['approved_always', { by: 'alice' }, 'for the rest of the attempt'],
    ['denied', { by: 'bob', reason: 'too risky' }, 'too risky'],
    ['timed_out', { onTimeout: 'allow' }, 'it is allowed'],
    ['timed_out', { onTimeout: 'deny' }, 'it is denied'],
    ['already_decided', { decidedBy: 'carol', by: 'dan' }, 'by `carol`'],
    ['no_request', { by: 'dan' }, 'No request waits'],
    ['not_approver', { by: 'mallory' }, '`mallory` is not among'],
    ['stopped', {}, '`someone` stopped the run'],
    ['decided_in_kubernetes', { decidedBy: 'admin' }, 'in Kubernetes'],
  ])('%s says what happened', (kind, details, part) => {
    expect(replyCommentText(kind, details)).toContain(part);
  });
});

describe('fenced and inlineCode', () => {
  it.each([
    ['plain', 'abc', '```text\nabc\n```'],
    ['a run of five', 'a`````b', '``````text\na`````b\n``````'],
  ])('fences %s', (_case, text, expected) => {
    expect(fenced(text, 100)).toBe(expected);
  });

  eachNamedCase('spans %s', inlineCode, [
    ['plain', 'abc', '`abc`'],
    ['a backtick inside', 'a`b', '``a`b``'],
    ['a backtick at the edge', '`a', '`` `a ``'],
    ['line breaks', 'a\nb', '`a b`'],
    ['empty', '  ', '(none)'],
  ]);
});
