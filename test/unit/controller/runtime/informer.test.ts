// What the informer's cache drops of each object: what no controller reads, and what is
// often most of an object kept in Git.
import { describe, expect, it } from 'vitest';
import {
  LAST_APPLIED_ANNOTATION,
  trimForCache,
  type KubeObject,
} from '../../../../src/controller/runtime/informer.js';

const object = (metadata: Record<string, unknown>): KubeObject => ({
  apiVersion: 'lorenz.dev/v1alpha1',
  kind: 'Workflow',
  metadata: { name: 'app', namespace: 'team', ...metadata },
});

describe('trimForCache', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    [
      'managed fields and the last-applied copy go, other annotations stay',
      {
        managedFields: [{ manager: 'kubectl' }],
        annotations: { [LAST_APPLIED_ANNOTATION]: '{"spec":{}}', 'lorenz.dev/issue-state': 'Todo' },
      },
      { annotations: { 'lorenz.dev/issue-state': 'Todo' } },
    ],
    ['no annotations at all', { managedFields: [] }, {}],
    ['annotations without the copy', { annotations: { a: '1' } }, { annotations: { a: '1' } }],
    ['only the copy', { annotations: { [LAST_APPLIED_ANNOTATION]: '{}' } }, { annotations: {} }],
  ])('%s', (_case, given, kept) => {
    const cached = object(given);
    trimForCache(cached);
    expect(cached.metadata).toEqual({ name: 'app', namespace: 'team', ...kept });
  });

  it('leaves an object without metadata alone', () => {
    const bare: KubeObject = { kind: 'Status' };
    trimForCache(bare);
    expect(bare).toEqual({ kind: 'Status' });
  });
});
