// jsonEqual answers what comparing two canonicalJson strings answers, without building them;
// the status writer asks for no more than it reads back.
import { describe, expect, it } from 'vitest';
import {
  ACCEPT_METADATA_ONLY,
  type KubeClient,
  type RequestOptions,
} from '../../../../src/controller/runtime/client.js';
import {
  canonicalJson,
  createStatusWriter,
  jsonEqual,
} from '../../../../src/controller/shared/status-writer.js';

const cases: Array<[string, unknown, unknown]> = [
  ['equal scalars', 'a', 'a'],
  ['different strings', 'a', 'b'],
  ['a number and its string', 1, '1'],
  ['null and an empty object', null, {}],
  [
    'keys in another order',
    { a: 1, b: { c: [1, 2], d: null } },
    { b: { d: null, c: [1, 2] }, a: 1 },
  ],
  ['an undefined key and no key', { a: 1, b: undefined }, { a: 1 }],
  ['an undefined key on the right', { a: 1 }, { a: 1, b: undefined }],
  ['null is a value', { a: 1, b: null }, { a: 1 }],
  ['a nested difference', { a: { b: { c: 1 } } }, { a: { b: { c: 2 } } }],
  ['arrays in another order', [1, 2], [2, 1]],
  ['arrays of other lengths', [1, 2], [1, 2, 3]],
  ['an undefined element is null', [1, undefined], [1, null]],
  ['an array and an object with its indices', [1], { 0: 1 }],
  ['an empty array and an empty object', [], {}],
  ['NaN and null', { a: Number.NaN }, { a: null }],
  ['Infinity and null in an array', [Number.POSITIVE_INFINITY], [null]],
  ['true and 1', { a: true }, { a: 1 }],
  ['a missing key against an extra one', { a: 1, b: 2 }, { a: 1, c: 2 }],
  ['statuses with conditions', statusWith('True'), statusWith('True')],
  ['statuses with another condition', statusWith('True'), statusWith('False')],
];

function statusWith(ready: string) {
  return {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready, reason: undefined, message: 'm' }],
    slots: [{ slot: 0, attempt: 1, hooks: [{ name: 'after_create', exitCode: null }] }],
  };
}

describe('jsonEqual', () => {
  it.each(cases)('%s', (_case, a, b) => {
    const expected = canonicalJson(a) === canonicalJson(b);
    expect(jsonEqual(a, b)).toBe(expected);
    expect(jsonEqual(b, a)).toBe(expected);
  });

  it('has cases of both answers', () => {
    const answers = new Set(cases.map(([, a, b]) => jsonEqual(a, b)));
    expect(answers).toEqual(new Set([true, false]));
  });
});

describe('createStatusWriter', () => {
  it('reads back only the metadata of a status write, and remembers its resourceVersion', async () => {
    const sent: RequestOptions[] = [];
    const client: KubeClient = {
      request: <T>(options: RequestOptions) => {
        sent.push(options);
        return Promise.resolve({
          kind: 'PartialObjectMetadata',
          metadata: { resourceVersion: '42' },
        } as T);
      },
      stream: () => Promise.resolve(),
      close: () => undefined,
    };
    const writer = createStatusWriter<{ phase: string }>(client, {
      group: 'lorenz.dev',
      version: 'v1alpha1',
      plural: 'issueruns',
    });
    await writer.write('ns/a', 'ns', 'a', { phase: 'Running' }, 1);
    expect(sent).toMatchObject([
      {
        method: 'PATCH',
        path: '/apis/lorenz.dev/v1alpha1/namespaces/ns/issueruns/a/status',
        headers: { Accept: ACCEPT_METADATA_ONLY },
      },
    ]);
    // A cache older than the write answers with the write; one as new, with itself.
    expect(
      writer.freshest('ns/a', { resourceVersion: '41', status: { phase: 'Pending' } }),
    ).toEqual({ phase: 'Running' });
    expect(writer.freshest('ns/a', { resourceVersion: '42', status: { phase: 'Done' } })).toEqual({
      phase: 'Done',
    });
  });
});
