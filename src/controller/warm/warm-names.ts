import { boundedName } from '../shared/object-names.js';

/**
 * `<workflow>-warm-<build>`: the name of a warm-up's Pod, inputs ConfigMap and claim, and of
 * the VolumeSnapshot taken of that claim. Deterministic (Tekton style): the build number is
 * recorded in status.warm before anything is made, so a restart or a stale cache finds the
 * same objects instead of making a second set. Bounded as Pod names are (63 characters).
 */
export const warmName = (workflow: string, build: number): string =>
  boundedName(workflow, `-warm-${build}`);
