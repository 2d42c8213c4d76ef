import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Api,
  type V1PersistentVolume,
  type V1PersistentVolumeClaim,
} from '@kubernetes/client-node';
import { httpStatus, PodConfigError } from './types.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
export const PROVISIONER = 'lorenz.dev/process-node';

async function readClaim(core: CoreV1Api, namespace: string, name: string) {
  try {
    return await core.readNamespacedPersistentVolumeClaim({ namespace, name });
  } catch (err) {
    if (httpStatus(err) === 404) {
      throw new PodConfigError(
        'CreateContainerConfigError',
        `persistentvolumeclaim "${name}" not found`,
        true,
      );
    }
    throw err;
  }
}

function hostPathOf(pv: V1PersistentVolume): string {
  const path = pv.spec?.hostPath?.path ?? pv.spec?.local?.path;
  if (!path) {
    throw new PodConfigError(
      'CreateContainerConfigError',
      `persistentvolume "${pv.metadata?.name}" is neither hostPath nor local: the process node cannot mount it`,
      false,
    );
  }
  return path;
}

async function markBound(
  core: CoreV1Api,
  claim: V1PersistentVolumeClaim,
  pv: V1PersistentVolume,
): Promise<void> {
  const namespace = claim.metadata?.namespace ?? 'default';
  const name = claim.metadata?.name ?? '';
  await core.patchNamespacedPersistentVolumeClaimStatus(
    {
      namespace,
      name,
      body: {
        status: {
          phase: 'Bound',
          accessModes: pv.spec?.accessModes,
          capacity: pv.spec?.capacity,
        },
      },
    },
    mergePatch,
  );
  await core.patchPersistentVolumeStatus(
    { name: pv.metadata?.name ?? '', body: { status: { phase: 'Bound' } } },
    mergePatch,
  );
}

/**
 * The host directory behind a claim. A claim already bound to a hostPath/local PV uses it;
 * an unbound claim gets a new hostPath PV under pvRoot, bound to it as the PV controller
 * would. The directory (and the PV, reclaim policy Retain) outlive the Pod.
 */
export async function claimHostPath(
  core: CoreV1Api,
  namespace: string,
  claimName: string,
  pvRoot: string,
): Promise<string> {
  const claim = await readClaim(core, namespace, claimName);
  if (claim.spec?.volumeName) {
    const pv = await core.readPersistentVolume({ name: claim.spec.volumeName });
    const path = hostPathOf(pv);
    await mkdir(path, { recursive: true, mode: 0o777 });
    if (claim.status?.phase !== 'Bound') await markBound(core, claim, pv);
    return path;
  }
  const pvName = `pvc-${claim.metadata?.uid}`;
  const path = join(pvRoot, pvName);
  await mkdir(path, { recursive: true, mode: 0o777 });
  const pv: V1PersistentVolume = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: pvName, annotations: { 'pv.kubernetes.io/provisioned-by': PROVISIONER } },
    spec: {
      capacity: { storage: claim.spec?.resources?.requests?.storage ?? '1Gi' },
      accessModes: claim.spec?.accessModes?.length ? claim.spec.accessModes : ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: claim.spec?.storageClassName ?? '',
      volumeMode: claim.spec?.volumeMode ?? 'Filesystem',
      hostPath: { path, type: 'DirectoryOrCreate' },
      claimRef: {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace,
        name: claimName,
        uid: claim.metadata?.uid,
      },
    },
  };
  try {
    await core.createPersistentVolume({ body: pv });
  } catch (err) {
    if (httpStatus(err) !== 409) throw err;
  }
  await core.patchNamespacedPersistentVolumeClaim(
    {
      namespace,
      name: claimName,
      body: {
        metadata: {
          annotations: {
            'pv.kubernetes.io/bind-completed': 'yes',
            'pv.kubernetes.io/bound-by-controller': 'yes',
          },
        },
        spec: { volumeName: pvName },
      },
    },
    mergePatch,
  );
  await markBound(core, claim, pv);
  return path;
}
