// The informer's owner index: a run's Pods by its uid, and Pods of a run's name by kind and
// name, kept right as objects come, change owner and go.
import { describe, expect, it } from 'vitest';
import { controllerOf, createOwnerIndex } from '../../../../src/controller/runtime/owner-index.js';

interface Pod {
  metadata: { name: string; namespace: string; ownerReferences?: unknown };
}

const pod = (name: string, owners?: unknown, namespace = 'team'): Pod => ({
  metadata: { name, namespace, ...(owners === undefined ? {} : { ownerReferences: owners }) },
});
const run = (uid: string, name = 'eng-1', controller: boolean | 'absent' = true) => ({
  apiVersion: 'lorenz.dev/v1alpha1',
  kind: 'IssueRun',
  name,
  uid,
  ...(controller === 'absent' ? {} : { controller }),
});
const names = (pods: Pod[]) => pods.map((each) => each.metadata.name).sort();

describe('controllerOf', () => {
  it.each([
    ['no owner references', pod('a'), undefined],
    ['references that are not a list', pod('a', { uid: 'u1' }), undefined],
    ['an owner that is not the controller', pod('a', [run('u1', 'eng-1', false)]), undefined],
    ['an owner without the controller flag', pod('a', [run('u1', 'eng-1', 'absent')]), undefined],
    ['the controller among others', pod('a', [run('u0', 'x', false), run('u1')]), 'u1'],
  ])('%s', (_case, object, uid) => {
    expect(controllerOf(object)?.uid).toBe(uid);
  });
});

describe('the owner index', () => {
  it('finds objects by their controller uid and by its kind and name', () => {
    const index = createOwnerIndex<Pod>();
    index.add('team/a', pod('a', [run('u1')]));
    index.add('team/b', pod('b', [run('u1')]));
    index.add('team/c', pod('c', [run('u2', 'eng-2')]));
    index.add('team/d', pod('d', [run('u0', 'eng-1')])); // an earlier run of the same name
    index.add('other/e', pod('e', [run('u9', 'eng-1')], 'other'));
    index.add('team/f', pod('f'));
    expect(names(index.byUid('u1'))).toEqual(['a', 'b']);
    expect(names(index.byUid('u2'))).toEqual(['c']);
    expect(index.byUid('unknown')).toEqual([]);
    expect(names(index.byName('team', 'IssueRun', 'eng-1'))).toEqual(['a', 'b', 'd']);
    expect(names(index.byName('other', 'IssueRun', 'eng-1'))).toEqual(['e']);
    expect(index.byName('team', 'Job', 'eng-1')).toEqual([]);
  });

  it('follows an object that changes owner, is replaced and goes', () => {
    const index = createOwnerIndex<Pod>();
    const first = pod('a', [run('u1')]);
    index.add('team/a', first);
    // Adopted by another run: removed under the old owner, added under the new one.
    const adopted = pod('a', [run('u2', 'eng-2')]);
    index.remove('team/a', first);
    index.add('team/a', adopted);
    expect(index.byUid('u1')).toEqual([]);
    expect(index.byName('team', 'IssueRun', 'eng-1')).toEqual([]);
    expect(index.byUid('u2')).toEqual([adopted]);
    // The newest object is returned, not the one first indexed.
    const newer = { ...adopted, metadata: { ...adopted.metadata, resourceVersion: '2' } };
    index.remove('team/a', adopted);
    index.add('team/a', newer);
    expect(index.byUid('u2')).toEqual([newer]);
    index.remove('team/a', newer);
    expect(index.byUid('u2')).toEqual([]);
    expect(index.byName('team', 'IssueRun', 'eng-2')).toEqual([]);
  });
});
