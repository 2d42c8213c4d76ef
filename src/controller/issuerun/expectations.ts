/**
 * Pods created but perhaps not in the informer's cache yet (controller-runtime's
 * "expectations"). Until the cache shows them, or the expectation expires, the reconciler
 * must not decide that they are missing and create them again.
 */
export interface PodExpectations {
  /** Records that these Pods of the run were just created. */
  expect(runKey: string, podNames: readonly string[], now: number): void;
  /** Whether some expected Pod is not in the cache yet (and the expectation still holds). */
  unmet(runKey: string, cachedPods: ReadonlySet<string>, now: number): boolean;
  forget(runKey: string): void;
}

/** How long an expectation holds: past it, a Pod still missing is missing for real. */
export const EXPECTATION_TTL_MS = 30_000;

export function createPodExpectations(ttlMs = EXPECTATION_TTL_MS): PodExpectations {
  const expected = new Map<string, { names: readonly string[]; until: number }>();
  return {
    expect(runKey, podNames, now) {
      expected.set(runKey, { names: podNames, until: now + ttlMs });
    },
    unmet(runKey, cachedPods, now) {
      const entry = expected.get(runKey);
      if (!entry || entry.until <= now) return false;
      return entry.names.some((name) => !cachedPods.has(name));
    },
    forget(runKey) {
      expected.delete(runKey);
    },
  };
}
