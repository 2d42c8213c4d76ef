import { cpus, totalmem } from 'node:os';
import type { V1Container, V1Pod, V1ResourceFieldSelector } from '@kubernetes/client-node';
import { PodConfigError } from './types.js';

export const POD_IP = '127.0.0.1';

/** `key="value"` lines sorted by key, as the kubelet writes labels and annotations files. */
export function formatMap(map: Record<string, string> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map((k) => `${k}=${JSON.stringify(map?.[k] ?? '')}`)
    .join('\n');
}

const subscript = /^metadata\.(labels|annotations)\['(.+)'\]$/;

/** The value of a downward API fieldRef path, for env vars and volume files alike. */
export function resolveFieldPath(pod: V1Pod, path: string, forVolume: boolean): string {
  const meta = pod.metadata ?? {};
  const sub = subscript.exec(path);
  if (sub) {
    const map = sub[1] === 'labels' ? meta.labels : meta.annotations;
    return map?.[sub[2] ?? ''] ?? '';
  }
  switch (path) {
    case 'metadata.name':
      return meta.name ?? '';
    case 'metadata.namespace':
      return meta.namespace ?? '';
    case 'metadata.uid':
      return meta.uid ?? '';
    case 'metadata.labels':
      if (forVolume) return formatMap(meta.labels);
      break;
    case 'metadata.annotations':
      if (forVolume) return formatMap(meta.annotations);
      break;
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.podIP':
    case 'status.hostIP':
      return POD_IP;
    case 'status.podIPs':
    case 'status.hostIPs':
      return POD_IP;
  }
  throw new PodConfigError(
    'CreateContainerConfigError',
    `unsupported fieldRef path ${JSON.stringify(path)}`,
    false,
  );
}

const suffixes: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A Kubernetes quantity as a plain number ("500m" → 0.5, "1Gi" → 1073741824). */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(q.trim());
  const factor = m ? suffixes[m[2] ?? ''] : undefined;
  if (!m || factor === undefined) {
    throw new PodConfigError('CreateContainerConfigError', `invalid quantity ${q}`, false);
  }
  return Number(m[1]) * factor;
}

/** limits.* / requests.* of a container; an unset limit is the node's capacity. */
export function resolveResourceField(
  container: V1Container | undefined,
  selector: V1ResourceFieldSelector,
): string {
  const [kind, resource] = selector.resource.split('.', 2);
  const resources = container?.resources;
  const set = kind === 'limits' ? resources?.limits : resources?.requests;
  const declared = resource ? set?.[resource] : undefined;
  let value: number;
  if (declared !== undefined) value = parseQuantity(declared);
  else if (resource === 'cpu') value = kind === 'limits' ? cpus().length : 0;
  else if (resource === 'memory') value = kind === 'limits' ? totalmem() : 0;
  else value = 0;
  const divisor = selector.divisor === undefined ? 1 : parseQuantity(selector.divisor);
  return String(Math.ceil(value / (divisor || 1)));
}
