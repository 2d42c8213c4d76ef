import { sha256Hex } from '../../api/run-pod.js';

/** Longest name a Pod may have and still serve as its hostname and as a label value. */
export const MAX_LABEL_NAME = 63;

/**
 * `<base><suffix>` when it fits in `max` characters; otherwise the base is cut and an
 * 8-hex digest of the whole base is put in its place, so two long run names that share a
 * prefix still get different, stable names.
 */
export function boundedName(base: string, suffix: string, max = MAX_LABEL_NAME): string {
  const whole = `${base}${suffix}`;
  if (whole.length <= max) return whole;
  const digest = sha256Hex(base).slice(0, 8);
  const room = max - suffix.length - digest.length - 1;
  // Names must start and end with an alphanumeric character: trim what the cut exposed.
  const head = base.slice(0, Math.max(room, 0)).replace(/[-.]+$/, '');
  return head.length > 0 ? `${head}-${digest}${suffix}` : `${digest}${suffix}`;
}

export const runPodName = (run: string, slot: number, attempt: number): string =>
  boundedName(run, `-${slot}-${attempt}`);

export const workspaceClaimName = (run: string, slot: number): string =>
  boundedName(run, `-${slot}-workspace`);

/** The rendered inputs of an attempt: `<run>-inputs`, later attempts `<run>-inputs-<attempt>`. */
export const inputsConfigMapName = (run: string, attempt = 1): string =>
  boundedName(run, attempt > 1 ? `-inputs-${attempt}` : '-inputs', 253);

/** The agent-tools token Secret of an attempt (every slot of that attempt mounts it). */
export const toolsTokenSecretName = (run: string, attempt: number): string =>
  boundedName(run, `-tools-${attempt}`, 253);

export const configSnapshotName = (workflow: string, digest: string): string =>
  boundedName(workflow, `-config-${digest.slice(0, 8)}`, 253);

/** The first 8 alphanumerics of an object's uid: tells apart objects that share a name. */
export function uidFragment(uid: string): string {
  return (
    uid
      .replace(/[^0-9a-zA-Z]/g, '')
      .slice(0, 8)
      .toLowerCase() || '0'
  );
}

/**
 * Event names: `<run>.<uid8>.<slot>-<attempt>-<seq>`. Stable for one run object, so a replay
 * creates nothing twice; the uid fragment gives a run deleted and re-created under the same
 * name its own Events (Events outlive their run until their TTL).
 */
export const hookEventName = (
  run: { name: string; uid: string },
  slot: number,
  attempt: number,
  seq: number,
): string => boundedName(run.name, `.${uidFragment(run.uid)}.${slot}-${attempt}-${seq}`, 253);

/**
 * git_workspace Events: `<run>.<uid8>.<slot>-<attempt>-git-<seq>`, numbered among the git
 * records of the Pod as hook Events are among its hook records, so they never meet.
 */
export const gitEventName = (
  run: { name: string; uid: string },
  slot: number,
  attempt: number,
  seq: number,
): string => boundedName(run.name, `.${uidFragment(run.uid)}.${slot}-${attempt}-git-${seq}`, 253);

/**
 * The IssueRun the dispatcher makes for an issue: `<workflow>-<identifier>`, lower-cased
 * with anything but letters and digits turned into `-`. When that changed the identifier
 * (`ENG_1` and `ENG-1` would meet), a digest of the identifier keeps the names apart.
 */
export function dispatchedRunName(workflow: string, identifier: string): string {
  const lower = identifier.toLowerCase();
  const slug = lower.replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  const exact = slug === lower && slug.length > 0;
  const suffix = exact ? slug : `${slug ? `${slug}-` : ''}${sha256Hex(identifier).slice(0, 8)}`;
  return boundedName(`${workflow}-${suffix}`, '', MAX_LABEL_NAME - '-99-999'.length);
}

/** Label values are limited to 63 characters: long names are shortened the same way. */
export const labelValue = (name: string): string => boundedName(name, '');

/**
 * The Kueue Pod group of the Pods an attempt starts together (an ensemble's slots):
 * `<run>-<uid8>-<attempt>-<first slot>`. The uid fragment keeps a run made again under the
 * same name out of a group its predecessor's Workload may still hold; slots started apart at
 * one attempt (retries) are disjoint, so their first slots tell their groups apart.
 */
export const podGroupName = (
  run: { name: string; uid: string },
  attempt: number,
  firstSlot: number,
): string => boundedName(run.name, `-${uidFragment(run.uid)}-${attempt}-${firstSlot}`);
