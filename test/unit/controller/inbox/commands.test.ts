import { describe, expect, it } from 'vitest';
import { INBOX_COMMENT_MARKER, INBOX_LIMITS } from '../../../../src/api/inbox.js';
import {
  answerText,
  isInboxComment,
  parseInboxCommands,
  type InboxCommand,
} from '../../../../src/controller/inbox/commands.js';
import { eachCase, eachNamedCase } from '../../../support/cases.js';

const approve = (always = false, requestId: string | null = null): InboxCommand => ({
  kind: 'approve',
  always,
  requestId,
});
const deny = (reason: string | null = null, requestId: string | null = null): InboxCommand => ({
  kind: 'deny',
  reason,
  requestId,
});

describe('parseInboxCommands', () => {
  eachNamedCase('reads %s', parseInboxCommands, [
    ['a bare /approve', '/approve', [approve()]],
    ['leading spaces', '   /approve', [approve()]],
    ['a trailing carriage return', '/approve\r\n', [approve()]],
    ['/approve always', '/approve always', [approve(true)]],
    ['upper case', '/APPROVE ALWAYS', [approve(true)]],
    ['mixed case', '/Approve', [approve()]],
    ['an id', '/approve a1-s0-2', [approve(false, 'a1-s0-2')]],
    ['always then id', '/approve always A1-S0-2', [approve(true, 'a1-s0-2')]],
    ['id then always', '/approve a1-s0-2 always', [approve(true, 'a1-s0-2')]],
    ['prose after /approve', '/approve looks good to me', [approve()]],
    ['/deny without reason', '/deny', [deny()]],
    ['/deny with reason', '/deny   not on main  ', [deny('not on main')]],
    ['/deny with id', '/deny a2-s1-7', [deny(null, 'a2-s1-7')]],
    ['/deny with id and reason', '/deny a2-s1-7 too risky', [deny('too risky', 'a2-s1-7')]],
    ['/stop', '/stop', [{ kind: 'stop' }]],
    ['/stop with words', '/STOP now please', [{ kind: 'stop' }]],
    ['/steer on one line', '/steer use pnpm', [{ kind: 'steer', text: 'use pnpm' }]],
    [
      '/steer over lines up to the next command',
      '/steer first this\nthen that\n\nand more\n/stop',
      [{ kind: 'steer', text: 'first this\nthen that\n\nand more' }, { kind: 'stop' }],
    ],
    [
      '/steer whose text starts on the next line',
      '/steer\nplease rebase',
      [{ kind: 'steer', text: 'please rebase' }],
    ],
    ['an empty /steer is none', '/steer   \n\n', []],
    [
      'commands in order',
      'Thanks!\n/deny a1-s0-1 no\n/approve a1-s0-2',
      [deny('no', 'a1-s0-1'), approve(false, 'a1-s0-2')],
    ],
  ]);

  it.each([
    ['/approved', '/approved'],
    ['/approvex', '/approvex'],
    ['/approve-always', '/approve-always'],
    ['/denying', '/denying it'],
    ['/stopped', '/stopped'],
    ['/steering', '/steering wheel'],
    ['a word before', 'please /approve'],
    ['a list item', '- /approve'],
    ['a heading', '# /approve'],
    ['an escaped slash', '\\/approve'],
    ['no slash', 'approve'],
    ['inline code', '`/approve`'],
    ['an inline span over lines', 'see `the\n/approve\ncommand` here'],
    ['a double-backtick span over lines', 'see ``a ` b\n/approve``'],
    ['a backtick fence', '```\n/approve\n```'],
    ['a tilde fence', '~~~\n/approve\n~~~'],
    ['a long fence not closed by a shorter one', '`````\n```\n/approve\n```\n`````'],
    ['an unclosed fence', '```sh\n/approve'],
    ['an indented fence', '  ```\n/approve\n  ```'],
    ['a tilde fence not closed by backticks', '~~~\n```\n/approve'],
    ['a quote', '> /approve'],
    ['a nested quote', '> > /approve'],
    ['a quote with spaces', '   >/approve'],
    ['a lazy quote line', '> the agent asked\n/approve'],
    ['indented code at the start', '    /approve'],
    ['indented code after a blank line', 'Look:\n\n    /approve'],
    ['tab-indented code', 'Look:\n\n\t/approve'],
    ['indented code over a blank line', '    x\n\n    /approve'],
    ['an HTML comment', '<!-- /approve -->'],
    ['a multi-line HTML comment', '<!--\n/approve\n-->'],
    ['an unclosed HTML comment', '<!--\n/approve'],
    ['a line after a comment on its line', '<!-- x --> /approve'],
    ['indented code after an HTML comment', '<!-- x -->\n    /approve'],
  ])('finds no command in %s', (_case, body) => {
    expect(parseInboxCommands(body)).toEqual([]);
  });

  eachNamedCase('reads a command %s', parseInboxCommands, [
    ['after a closed fence', '```\n/deny\n```\n/approve', [approve()]],
    ['after a closed comment', '<!-- /deny -->\n/approve', [approve()]],
    ['after a closed quote', '> /deny\n\n/approve', [approve()]],
    ['after a closed code span', 'a `b` c\n/approve', [approve()]],
    ['with an unmatched backtick before', 'a ` b\n/approve', [approve()]],
    ['indented inside a paragraph', 'I agree\n    /approve', [approve()]],
    ['a comment after the command', '/deny <!-- hidden --> bad', [deny('bad')]],
    ['a fence after a comment on its line is not a fence', '<!-- -->```\n/approve', [approve()]],
  ]);

  it('keeps code in a steer but drops hidden text', () => {
    const body = '/steer use this:\n```\nnpm test\n```\n<!-- secret -->\ndone';
    expect(parseInboxCommands(body)).toEqual([
      { kind: 'steer', text: 'use this:\n```\nnpm test\n```\ndone' },
    ]);
  });

  it('bounds a steer and a reason', () => {
    const [steer] = parseInboxCommands(`/steer ${'x'.repeat(100_000)}`);
    expect(steer).toEqual({ kind: 'steer', text: 'x'.repeat(INBOX_LIMITS.steerLength) });
    const [denial] = parseInboxCommands(`/deny ${'y'.repeat(10_000)}`);
    expect(denial).toEqual(deny('y'.repeat(INBOX_LIMITS.reasonLength)));
  });

  it('survives a large hostile body', () => {
    // 5000 lines that each close the span the line before opened, then an unclosed comment.
    const body = 'a ` b\n'.repeat(5000) + '/approve\n' + '<!--'.repeat(1000) + '\n/deny';
    const started = Date.now();
    expect(parseInboxCommands(body)).toEqual([approve()]);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('answerText', () => {
  eachNamedCase('%s', answerText, [
    ['plain text', 'use the blue one', 'use the blue one'],
    ['trims', '\n\n  blue  \n', 'blue'],
    ['drops quoted lines', '> which colour?\n> > nested\nblue', 'blue'],
    ['drops the marker', `${INBOX_COMMENT_MARKER}\nblue`, 'blue'],
    ['keeps code', 'blue\n```\nx\n```', 'blue\n```\nx\n```'],
  ]);

  it('is bounded without splitting a surrogate pair', () => {
    const answer = answerText('a' + '😀'.repeat(INBOX_LIMITS.answerLength));
    expect(answer.length).toBeLessThanOrEqual(INBOX_LIMITS.answerLength);
    expect(answer.endsWith('😀')).toBe(true);
  });
});

describe('isInboxComment', () => {
  eachCase('%j → %s', isInboxComment, [
    [`${INBOX_COMMENT_MARKER}\nhello`, true],
    [`  ${INBOX_COMMENT_MARKER}\nhello`, true],
    [`hello ${INBOX_COMMENT_MARKER}`, false],
    ['<!-- lorenz -->', false],
    ['', false],
  ]);
});
