import type { V1Container, V1PodSecurityContext } from '@kubernetes/client-node';
import { posix } from 'node:path';
import type { ImageBinds, ImageMap } from './types.js';
import { PodConfigError } from './types.js';
import type { VolumeHosts } from './volumes.js';

export interface Mount {
  source: string;
  target: string;
  readOnly: boolean;
  /** A subPath that does not exist yet is created as a directory, as the kubelet does. */
  createIfMissing: boolean;
}

export interface RunAs {
  uid: number;
  gid: number;
  groups: number[];
}

/** Single-quotes a word for sh. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The image map entry for a ref: exact ref first, then the repository without tag/digest. */
export function imageBindsFor(imageMap: ImageMap, image: string | undefined): ImageBinds {
  if (!image) return {};
  if (imageMap[image]) return imageMap[image];
  const withoutDigest = image.split('@')[0] ?? image;
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  const repo = colon > lastSlash ? withoutDigest.slice(0, colon) : withoutDigest;
  return imageMap[withoutDigest] ?? imageMap[repo] ?? {};
}

const depth = (p: string) => posix.normalize(p).split('/').filter(Boolean).length;

/**
 * Image binds (they stand for the image's own files) come first, then volume mounts,
 * parents before children so a nested mountPath lands inside its parent volume.
 */
export function containerMounts(
  container: V1Container,
  hosts: VolumeHosts,
  imageBinds: ImageBinds,
  expand: (s: string) => string,
): Mount[] {
  const image = Object.entries(imageBinds)
    .map(([target, source]) => ({ source, target, readOnly: false, createIfMissing: false }))
    .sort((a, b) => depth(a.target) - depth(b.target));
  const volumes = (container.volumeMounts ?? []).map((vm) => {
    const host = hosts.get(vm.name);
    if (host === undefined) {
      throw new PodConfigError(
        'CreateContainerConfigError',
        `volumeMount "${vm.name}" names no volume of the Pod`,
        false,
      );
    }
    const subPath = vm.subPathExpr ? expand(vm.subPathExpr) : (vm.subPath ?? '');
    if (subPath.split('/').includes('..') || posix.isAbsolute(subPath)) {
      throw new PodConfigError(
        'CreateContainerConfigError',
        `volumeMount "${vm.name}": subPath ${JSON.stringify(subPath)} must be a relative path without '..'`,
        false,
      );
    }
    return {
      source: subPath ? posix.join(host, subPath) : host,
      target: vm.mountPath,
      readOnly: vm.readOnly ?? false,
      createIfMissing: subPath !== '',
    };
  });
  volumes.sort((a, b) => depth(a.target) - depth(b.target));
  return [...image, ...volumes];
}

export function runAsFor(
  container: V1Container,
  podContext: V1PodSecurityContext | undefined,
): RunAs | undefined {
  const sc = container.securityContext;
  const uid = sc?.runAsUser ?? podContext?.runAsUser;
  if (uid === undefined || uid === null) return undefined;
  const gid = sc?.runAsGroup ?? podContext?.runAsGroup ?? 0;
  const groups = [
    ...(podContext?.fsGroup !== undefined ? [podContext.fsGroup] : []),
    ...(podContext?.supplementalGroups ?? []),
  ];
  return { uid, gid, groups };
}

/**
 * The sh script run inside `unshare --mount`: bind each mount (mkdir/touch the target
 * first), remount read-only ones, cd to workingDir, drop to runAsUser, exec "$@". A setup
 * failure writes its reason to the termination log and exits 128.
 */
export function mountScript(options: {
  mounts: Mount[];
  terminationLog: { host: string; path: string };
  workingDir: string | undefined;
  runAs: RunAs | undefined;
}): string {
  const { mounts, terminationLog, workingDir, runAs } = options;
  const lines = [
    'set -u',
    `fail() { echo "process-node: $*" >&2; printf '%s' "$*" > ${shellQuote(terminationLog.host)}; exit 128; }`,
    'bindmount() {',
    '  if [ -d "$1" ]; then mkdir -p "$2" || fail "cannot create mount point $2"',
    '  elif [ -e "$1" ]; then mkdir -p "$(dirname "$2")" && { [ -e "$2" ] || : > "$2"; } || fail "cannot create mount point $2"',
    '  else fail "mount source $1 does not exist"; fi',
    '  mount --bind "$1" "$2" || fail "cannot bind $1 at $2"',
    '  if [ "$3" = ro ]; then mount -o remount,bind,ro "$2" || fail "cannot make $2 read-only"; fi',
    '}',
  ];
  for (const m of mounts) {
    lines.push(
      `bindmount ${shellQuote(m.source)} ${shellQuote(m.target)} ${m.readOnly ? 'ro' : 'rw'}`,
    );
  }
  lines.push(`bindmount ${shellQuote(terminationLog.host)} ${shellQuote(terminationLog.path)} rw`);
  const dir = workingDir || '/';
  lines.push(
    `mkdir -p ${shellQuote(dir)} && cd ${shellQuote(dir)} || fail "cannot enter workingDir ${dir}"`,
  );
  if (runAs) {
    const groups = runAs.groups.length ? `--groups=${runAs.groups.join(',')}` : '--clear-groups';
    lines.push(`exec setpriv --reuid=${runAs.uid} --regid=${runAs.gid} ${groups} -- "$@"`);
  } else {
    lines.push('exec "$@"');
  }
  return lines.join('\n') + '\n';
}
