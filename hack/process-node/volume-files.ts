import type {
  CoreV1Api,
  V1ConfigMapProjection,
  V1DownwardAPIVolumeFile,
  V1KeyToPath,
  V1Pod,
  V1SecretProjection,
  V1ServiceAccountTokenProjection,
  V1Volume,
} from '@kubernetes/client-node';
import type { FileSet } from './atomic-writer.js';
import { resolveFieldPath, resolveResourceField } from './field-ref.js';
import type { KeyedData, ObjectSource } from './objects.js';
import { describeError, PodConfigError } from './types.js';

const DEFAULT_MODE = 0o644;

export interface FilesContext {
  pod: V1Pod;
  objects: ObjectSource;
  core: CoreV1Api;
  /** TokenRequest results by audience/expiry, so a downward refresh does not mint again. */
  tokens: Map<string, string>;
}

function keyedFiles(
  kind: 'configmap' | 'secret',
  data: KeyedData | undefined,
  items: V1KeyToPath[] | undefined,
  optional: boolean,
  mode: number,
  out: FileSet,
): void {
  if (!data) return;
  if (!items?.length) {
    for (const [key, value] of data) out.set(key, { data: value, mode });
    return;
  }
  for (const item of items) {
    const value = data.get(item.key);
    if (value === undefined) {
      if (optional) continue;
      throw new PodConfigError(
        'CreateContainerConfigError',
        `${kind} references non-existent config key: ${item.key}`,
        true,
      );
    }
    out.set(item.path, { data: value, mode: item.mode ?? mode });
  }
}

async function configMapFiles(
  ctx: FilesContext,
  src: V1ConfigMapProjection,
  mode: number,
  out: FileSet,
): Promise<void> {
  const optional = src.optional ?? false;
  const ns = ctx.pod.metadata?.namespace ?? 'default';
  const data = await ctx.objects.configMap(ns, src.name ?? '', optional);
  keyedFiles('configmap', data, src.items, optional, mode, out);
}

async function secretFiles(
  ctx: FilesContext,
  name: string,
  src: V1SecretProjection,
  mode: number,
  out: FileSet,
): Promise<void> {
  const optional = src.optional ?? false;
  const ns = ctx.pod.metadata?.namespace ?? 'default';
  const data = await ctx.objects.secret(ns, name, optional);
  keyedFiles('secret', data, src.items, optional, mode, out);
}

function downwardFiles(
  pod: V1Pod,
  items: V1DownwardAPIVolumeFile[] | undefined,
  mode: number,
  out: FileSet,
): void {
  for (const item of items ?? []) {
    let value: string;
    if (item.fieldRef) value = resolveFieldPath(pod, item.fieldRef.fieldPath, true);
    else if (item.resourceFieldRef) {
      const name = item.resourceFieldRef.containerName;
      const container = pod.spec?.containers.find((c) => c.name === name);
      value = resolveResourceField(container, item.resourceFieldRef);
    } else continue;
    out.set(item.path, { data: Buffer.from(value), mode: item.mode ?? mode });
  }
}

async function tokenFile(
  ctx: FilesContext,
  src: V1ServiceAccountTokenProjection,
  mode: number,
  out: FileSet,
): Promise<void> {
  const expirationSeconds = src.expirationSeconds ?? 3600;
  const cacheKey = `${src.audience ?? ''}/${expirationSeconds}`;
  let token = ctx.tokens.get(cacheKey);
  if (token === undefined) {
    const meta = ctx.pod.metadata ?? {};
    const sa = ctx.pod.spec?.serviceAccountName || 'default';
    try {
      const response = await ctx.core.createNamespacedServiceAccountToken({
        name: sa,
        namespace: meta.namespace ?? 'default',
        body: {
          spec: {
            audiences: src.audience ? [src.audience] : [],
            expirationSeconds,
            boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: meta.name, uid: meta.uid },
          },
        },
      });
      token = response.status?.token ?? '';
    } catch (err) {
      throw new PodConfigError(
        'CreateContainerConfigError',
        `serviceAccountToken for serviceaccount "${sa}": TokenRequest failed: ${describeError(err)}`,
        true,
      );
    }
    ctx.tokens.set(cacheKey, token);
  }
  out.set(src.path, { data: Buffer.from(token), mode });
}

/** The files of a configMap, secret, downwardAPI or projected volume. */
export async function volumeFiles(ctx: FilesContext, volume: V1Volume): Promise<FileSet> {
  const out: FileSet = new Map();
  if (volume.configMap) {
    const mode = volume.configMap.defaultMode ?? DEFAULT_MODE;
    await configMapFiles(ctx, volume.configMap, mode, out);
  } else if (volume.secret) {
    const src = volume.secret;
    const mode = src.defaultMode ?? DEFAULT_MODE;
    await secretFiles(ctx, src.secretName ?? '', src, mode, out);
  } else if (volume.downwardAPI) {
    const mode = volume.downwardAPI.defaultMode ?? DEFAULT_MODE;
    downwardFiles(ctx.pod, volume.downwardAPI.items, mode, out);
  } else if (volume.projected) {
    const mode = volume.projected.defaultMode ?? DEFAULT_MODE;
    for (const source of volume.projected.sources ?? []) {
      if (source.configMap) await configMapFiles(ctx, source.configMap, mode, out);
      else if (source.secret)
        await secretFiles(ctx, source.secret.name ?? '', source.secret, mode, out);
      else if (source.downwardAPI) downwardFiles(ctx.pod, source.downwardAPI.items, mode, out);
      else if (source.serviceAccountToken)
        await tokenFile(ctx, source.serviceAccountToken, mode, out);
      else {
        const kind = Object.keys(source).find((k) => source[k as keyof typeof source]);
        throw new PodConfigError(
          'CreateContainerConfigError',
          `volume "${volume.name}": projected source ${kind ?? '(empty)'} is not supported on the process node`,
          false,
        );
      }
    }
  }
  return out;
}

/** Whether a volume's content depends on the Pod's labels or annotations. */
export function isDownwardVolume(volume: V1Volume): boolean {
  return Boolean(
    volume.downwardAPI || volume.projected?.sources?.some((s) => s.downwardAPI !== undefined),
  );
}
