// The web view reads its event streams with fetch() (EventSource cannot send the bearer
// token) and parses them with web/src/sse.ts: the cases of the format, and chunks split
// anywhere, as the network splits them.
import { describe, expect, it } from 'vitest';
import { backoffMs, SseParser, type SseMessage } from '../../../web/src/sse.js';

function parseAll(chunks: string[]): SseMessage[] {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.feed(chunk));
}

describe('SseParser', () => {
  it.each<[string, string, SseMessage[]]>([
    ['one event', 'event: run\ndata: {"a":1}\n\n', [{ event: 'run', data: '{"a":1}' }]],
    ['default event name', 'data: x\n\n', [{ event: 'message', data: 'x' }]],
    ['multi-line data', 'data: a\ndata: b\n\n', [{ event: 'message', data: 'a\nb' }]],
    [
      'comment (heartbeat) ignored',
      ': keep-alive\n\ndata: x\n\n',
      [{ event: 'message', data: 'x' }],
    ],
    ['no space after colon', 'event:end\ndata:{}\n\n', [{ event: 'end', data: '{}' }]],
    ['CRLF line ends', 'event: e\r\ndata: x\r\n\r\n', [{ event: 'e', data: 'x' }]],
    ['CR line ends', 'event: e\rdata: x\r\r', [{ event: 'e', data: 'x' }]],
    ['id kept', 'id: 7\ndata: x\n\n', [{ event: 'message', data: 'x', id: '7' }]],
    [
      'event without data dispatches nothing',
      'event: x\n\ndata: y\n\n',
      [{ event: 'message', data: 'y' }],
    ],
    ['incomplete event held back', 'event: run\ndata: {', []],
  ])('%s', (_name, input, expected) => {
    expect(parseAll([input])).toEqual(expected);
  });

  it('gives the same events however the stream is split, CRLF split too', () => {
    const stream =
      'event: entry\r\ndata: {"seq":1}\r\n\r\n: hb\r\n\r\nevent: end\r\ndata: {}\r\n\r\n';
    const whole = parseAll([stream]);
    expect(whole).toEqual([
      { event: 'entry', data: '{"seq":1}' },
      { event: 'end', data: '{}' },
    ]);
    for (let cut = 1; cut < stream.length; cut++) {
      expect(parseAll([stream.slice(0, cut), stream.slice(cut)])).toEqual(whole);
    }
    expect(parseAll([...stream])).toEqual(whole);
  });
});

describe('backoffMs', () => {
  it('doubles from 0.5 s up to 10 s', () => {
    expect([0, 1, 2, 3, 4, 5, 10].map(backoffMs)).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });
});
