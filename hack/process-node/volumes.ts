import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { V1HostPathVolumeSource, V1Volume } from '@kubernetes/client-node';
import { writeAtomic } from './atomic-writer.js';
import { claimHostPath } from './pv-provisioner.js';
import { PodConfigError } from './types.js';
import { isDownwardVolume, volumeFiles, type FilesContext } from './volume-files.js';

/** Volume name → the host path that is bind-mounted for it. */
export type VolumeHosts = Map<string, string>;

const FILE_VOLUMES = ['configMap', 'secret', 'downwardAPI', 'projected'] as const;

function volumeKind(volume: V1Volume): string {
  return Object.keys(volume).find((k) => k !== 'name') ?? '(none)';
}

async function hostPathVolume(volume: V1Volume, src: V1HostPathVolumeSource): Promise<string> {
  const type = src.type ?? '';
  if (type === 'DirectoryOrCreate') await mkdir(src.path, { recursive: true, mode: 0o755 });
  else if (type === 'FileOrCreate' && !existsSync(src.path)) {
    await mkdir(dirname(src.path), { recursive: true });
    await writeFile(src.path, '', { mode: 0o644 });
  } else if (type !== '' && !existsSync(src.path)) {
    throw new PodConfigError(
      'CreateContainerConfigError',
      `volume "${volume.name}": hostPath ${src.path} (${type}) does not exist`,
      true,
    );
  }
  return src.path;
}

/**
 * Brings every volume of the Pod into existence on the host. emptyDir and file volumes live
 * under podDir/volumes/<name> (shared by all containers of the Pod); claims map to their
 * PV directory under pvRoot. A type the node cannot provide is a config error, not a crash.
 */
export async function materializeVolumes(
  ctx: FilesContext,
  podDir: string,
  pvRoot: string,
): Promise<VolumeHosts> {
  const hosts: VolumeHosts = new Map();
  const namespace = ctx.pod.metadata?.namespace ?? 'default';
  for (const volume of ctx.pod.spec?.volumes ?? []) {
    const dir = join(podDir, 'volumes', volume.name);
    if (volume.emptyDir) {
      await mkdir(dir, { recursive: true });
      // The kubelet makes emptyDirs world-writable so any runAsUser can use them.
      await chmod(dir, 0o777);
      hosts.set(volume.name, dir);
    } else if (volume.hostPath) {
      hosts.set(volume.name, await hostPathVolume(volume, volume.hostPath));
    } else if (volume.persistentVolumeClaim) {
      const claim = volume.persistentVolumeClaim.claimName;
      hosts.set(volume.name, await claimHostPath(ctx.core, namespace, claim, pvRoot));
    } else if (FILE_VOLUMES.some((k) => volume[k] !== undefined)) {
      await writeAtomic(dir, await volumeFiles(ctx, volume));
      hosts.set(volume.name, dir);
    } else {
      throw new PodConfigError(
        'CreateContainerConfigError',
        `volume "${volume.name}": volume type ${volumeKind(volume)} is not supported on the process node`,
        false,
      );
    }
  }
  return hosts;
}

/** Rewrites (atomically) the volumes whose files come from labels or annotations. */
export async function refreshDownwardVolumes(ctx: FilesContext, podDir: string): Promise<void> {
  for (const volume of ctx.pod.spec?.volumes ?? []) {
    if (!isDownwardVolume(volume)) continue;
    await writeAtomic(join(podDir, 'volumes', volume.name), await volumeFiles(ctx, volume));
  }
}
