import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { bridgeEnvironment } from '../../../src/agent/environment.js';
import { jsonLinesOnly } from '../../../src/agent/lines.js';
import { createUpdateForwarder } from '../../../src/agent/updates.js';
import { addTurnUsage } from '../../../src/agent/usage.js';
import { parseScript, splitWords } from '../../fixtures/scripted-agent/directives.js';

describe('bridgeEnvironment', () => {
  const base = {
    PATH: '/bin',
    LINEAR_API_KEY: 'lin',
    GITHUB_TOKEN: 'gh',
    RENAMED_KEY: 'tracker-key',
    DEPLOY_TOKEN: 'deploy',
    OPENAI_API_KEY: 'agent-key',
  };

  it.each([
    { name: 'tracker credentials by name', drop: ['LINEAR_API_KEY', 'GITHUB_TOKEN'] },
    { name: 'any variable holding the tracker key', drop: ['RENAMED_KEY'] },
    { name: 'controller-only variables', drop: ['DEPLOY_TOKEN'] },
  ])('withholds $name', ({ drop }) => {
    const env = bridgeEnvironment({
      base,
      trackerApiKey: 'tracker-key',
      controllerOnly: ['DEPLOY_TOKEN'],
      bridgeEnv: {},
    });
    for (const name of drop) expect(env).not.toHaveProperty(name);
    expect(env).toMatchObject({ PATH: '/bin', OPENAI_API_KEY: 'agent-key' });
  });

  it("adds the bridge's variables, but not a tracker credential even from there", () => {
    const env = bridgeEnvironment({
      base: { PATH: '/bin' },
      trackerApiKey: null,
      controllerOnly: [],
      bridgeEnv: { CODEX_HOME: '/codex', LINEAR_API_KEY: 'lin' },
    });
    expect(env).toEqual({ PATH: '/bin', CODEX_HOME: '/codex' });
  });
});

describe('jsonLinesOnly', () => {
  it('passes JSON object lines and diverts everything else', async () => {
    const stdout = new PassThrough();
    const malformed: string[] = [];
    const stream = jsonLinesOnly(stdout, (line) => malformed.push(line));
    stdout.write('{"jsonrpc":"2.0","id":1,"result":{}}\nWelcome to the bridge!\n[1,2]\n');
    stdout.end('{"jsonrpc":"2.0","method":"x"}');
    const chunks: Uint8Array[] = [];
    for await (const chunk of stream as AsyncIterable<Uint8Array>) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString('utf8');
    expect(text).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","method":"x"}\n');
    expect(malformed).toEqual(['Welcome to the bridge!', '[1,2]']);
  });
});

describe('createUpdateForwarder', () => {
  const chunk = (text: string) =>
    ({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } }) as const;

  it('coalesces back-to-back message chunks and passes other updates through', () => {
    const emitted: Record<string, unknown>[] = [];
    const forwarder = createUpdateForwarder((message) => emitted.push(message));
    forwarder.push(1, chunk('Hel'));
    forwarder.push(1, chunk('lo'));
    forwarder.push(1, { sessionUpdate: 'usage_update', used: 5, size: 100 });
    forwarder.push(1, chunk('Bye'));
    forwarder.push(2, chunk('Next'));
    forwarder.flush();
    expect(emitted).toEqual([
      { turn: 1, update: chunk('Hello') },
      { turn: 1, update: { sessionUpdate: 'usage_update', used: 5, size: 100 } },
      { turn: 1, update: chunk('Bye') },
      { turn: 2, update: chunk('Next') },
    ]);
  });
});

describe('addTurnUsage', () => {
  it('sums per-turn counts into a cumulative total and ignores turns without usage', () => {
    const first = addTurnUsage(undefined, { inputTokens: 3, outputTokens: 2, totalTokens: 5 });
    expect(addTurnUsage(first, null)).toEqual(first);
    expect(addTurnUsage(first, { inputTokens: 1, outputTokens: 1, totalTokens: 2 })).toEqual({
      inputTokens: 4,
      outputTokens: 3,
      totalTokens: 7,
    });
    expect(addTurnUsage(undefined, undefined)).toBeUndefined();
  });
});

describe('scripted agent directives', () => {
  it('splits the current turn from scheduled turns, ignoring prose', () => {
    const script = parseScript('Fix the bug.\n@write a.txt hi\n@turn 2: @stop refusal\n  @say x');
    expect(script.now).toEqual([
      { name: 'write', rest: 'a.txt hi' },
      { name: 'say', rest: 'x' },
    ]);
    expect(script.later.get(2)).toEqual([{ name: 'stop', rest: 'refusal' }]);
  });

  it.each([
    { text: 'path some content here', limit: 2, words: ['path', 'some content here'] },
    { text: '"a b" "c\\nd"', limit: 2, words: ['a b', 'c\nd'] },
    { text: 'file.txt old new', limit: 3, words: ['file.txt', 'old', 'new'] },
  ])('splits $text into $limit words', ({ text, limit, words }) => {
    expect(splitWords(text, limit)).toEqual(words);
  });
});
