// The web view's handling of hostile text (web/src/text.ts): escapes stripped, control and
// bidi characters made visible, links only http(s). The browser tests check the same end to
// end; these pin each case.
import { describe, expect, it } from 'vitest';
import { displayText, formatDuration, safeHref } from '../../../web/src/text.js';
import { eachCase, eachNamedCase } from '../../support/cases.js';

describe('displayText', () => {
  // Escape sequences are removed first, then what control characters are left is shown.
  eachNamedCase('%s', displayText, [
    // escape sequences: removed
    ['colour', '\u001b[31mred\u001b[0m', 'red'],
    ['bold and 256 colours', '\u001b[1;38;5;196mX\u001b[m', 'X'],
    ['cursor moves and erase', 'a\u001b[2K\u001b[1Gb\u001b[10;20H', 'ab'],
    ['OSC title ended by BEL', '\u001b]0;evil title\u0007text', 'text'],
    [
      'OSC 8 hyperlink ended by ST',
      '\u001b]8;;https://x.example\u001b\\link\u001b]8;;\u001b\\',
      'link',
    ],
    ['8-bit CSI', '\u009b31mred', 'red'],
    ['two-byte escape', '\u001bMup', 'up'],
    ['plain text kept', 'no [escapes] here', 'no [escapes] here'],
    // control characters: shown
    ['NUL and BEL', 'a\u0000b\u0007c', 'a\u2400b\u2407c'],
    ['carriage return (would overwrite the line)', 'ok\rFAIL', 'ok\u240dFAIL'],
    ['a lone ESC left after stripping', '\u001b', '\u241b'],
    ['DEL', 'x\u007f', 'x\u2421'],
    ['C1 control', 'x\u0085y', 'x<U+0085>y'],
    ['right-to-left override', 'file\u202Egnp.exe', 'file<U+202E>gnp.exe'],
    ['tab and newline kept', 'a\tb\nc', 'a\tb\nc'],
  ]);

  it('strips escapes, then shows what is left', () => {
    expect(displayText('\u001b[31m<script>\u0000</script>')).toBe('<script>\u2400</script>');
  });

  it('a 1 MB line goes through in linear time', () => {
    const line = 'x'.repeat(1 << 20) + '\u001b[31m';
    const started = performance.now();
    expect(displayText(line)).toHaveLength(1 << 20);
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('safeHref', () => {
  eachNamedCase('%s', safeHref, [
    ['https', 'https://linear.app/t/ENG-1', 'https://linear.app/t/ENG-1'],
    ['http', 'http://tracker.local/1', 'http://tracker.local/1'],
    ['javascript:', 'javascript:alert(1)', undefined],
    ['javascript: with case and spaces', ' JavaScript:alert(1)', undefined],
    ['data:', 'data:text/html,<script>alert(1)</script>', undefined],
    ['vbscript:', 'vbscript:msgbox(1)', undefined],
    ['relative', '/runs', undefined],
    ['not a URL', 'not a url', undefined],
    ['unset', undefined, undefined],
  ]);
});

describe('formatDuration', () => {
  eachCase('%d ms is %s', formatDuration, [
    [850, '850 ms'],
    [4200, '4.2 s'],
    [185_000, '3 m 05 s'],
    [7_800_000, '2 h 10 m'],
    [-1, '–'],
  ]);
});
