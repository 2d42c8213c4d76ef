// The objects of an informer's cache by their controller (the owner reference with
// `controller: true`), as client-go's indexers keep them: a reconcile asks for a run's Pods
// without walking every Pod of the namespace, which made a burst of N runs cost N² steps.

interface OwnerReference {
  uid?: string;
  kind?: string;
  name?: string;
  controller?: boolean;
}

interface Owned {
  metadata?: { namespace?: string; ownerReferences?: unknown; [key: string]: unknown };
}

export interface OwnerIndex<T extends Owned> {
  /** Indexes an object stored under its cache key (call remove first when it replaces one). */
  add(key: string, object: T): void;
  remove(key: string, object: T): void;
  /** The objects whose controller has this uid. */
  byUid(uid: string): T[];
  /** The objects of a namespace whose controller is of this kind and name, whatever its uid. */
  byName(namespace: string, kind: string, name: string): T[];
}

/** The controller owner reference, if the object has one. */
export function controllerOf(object: Owned): OwnerReference | undefined {
  const references = object.metadata?.ownerReferences;
  if (!Array.isArray(references)) return undefined;
  return (references as OwnerReference[]).find((reference) => reference?.controller === true);
}

const nameKey = (namespace: string, kind: string, name: string) => `${namespace}/${kind}/${name}`;

export function createOwnerIndex<T extends Owned>(): OwnerIndex<T> {
  const byUid = new Map<string, Map<string, T>>();
  const byName = new Map<string, Map<string, T>>();
  const keysOf = (object: T) => {
    const owner = controllerOf(object);
    if (!owner) return undefined;
    return {
      uid: owner.uid ?? '',
      name: nameKey(object.metadata?.namespace ?? '', owner.kind ?? '', owner.name ?? ''),
    };
  };
  const put = (index: Map<string, Map<string, T>>, at: string, key: string, object: T) => {
    let entries = index.get(at);
    if (!entries) index.set(at, (entries = new Map<string, T>()));
    entries.set(key, object);
  };
  const drop = (index: Map<string, Map<string, T>>, at: string, key: string) => {
    const entries = index.get(at);
    if (!entries) return;
    entries.delete(key);
    if (entries.size === 0) index.delete(at);
  };
  return {
    add(key, object) {
      const at = keysOf(object);
      if (!at) return;
      put(byUid, at.uid, key, object);
      put(byName, at.name, key, object);
    },
    remove(key, object) {
      const at = keysOf(object);
      if (!at) return;
      drop(byUid, at.uid, key);
      drop(byName, at.name, key);
    },
    byUid: (uid) => [...(byUid.get(uid)?.values() ?? [])],
    byName: (namespace, kind, name) => [
      ...(byName.get(nameKey(namespace, kind, name))?.values() ?? []),
    ],
  };
}
