import type { ArchiveStore, ArchivedRun } from './types.js';

/**
 * The archived run a reader asked for by name: the newest of that name, or the one of `uid`
 * (a live run's, whose Pods are gone). A uid that belongs to a run of another name or
 * namespace finds nothing, so a reader never shows a run it did not name.
 */
export async function archivedRunNamed(
  store: ArchiveStore,
  ref: { namespace: string; name: string; uid?: string | undefined },
): Promise<ArchivedRun | undefined> {
  const found = await store.getRun(
    ref.uid ? { uid: ref.uid } : { namespace: ref.namespace, name: ref.name },
  );
  return found && found.run.namespace === ref.namespace && found.run.name === ref.name
    ? found
    : undefined;
}
