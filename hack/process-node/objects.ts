import { readFileSync } from 'node:fs';
import type { CoreV1Api, V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { httpStatus, PodConfigError } from './types.js';

/** Key → bytes of a ConfigMap (data and binaryData) or a Secret (base64-decoded data). */
export type KeyedData = Map<string, Buffer>;

export interface ObjectSource {
  configMap(namespace: string, name: string, optional: boolean): Promise<KeyedData | undefined>;
  secret(namespace: string, name: string, optional: boolean): Promise<KeyedData | undefined>;
}

/**
 * kube-root-ca.crt is published by kube-controller-manager, which need not run here; when it
 * is absent the node serves the cluster CA itself so service-account volumes still mount.
 */
const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

function configMapData(cm: V1ConfigMap): KeyedData {
  const out: KeyedData = new Map();
  for (const [k, v] of Object.entries(cm.data ?? {})) out.set(k, Buffer.from(v));
  for (const [k, v] of Object.entries(cm.binaryData ?? {})) out.set(k, Buffer.from(v, 'base64'));
  return out;
}

function secretData(secret: V1Secret): KeyedData {
  const out: KeyedData = new Map();
  for (const [k, v] of Object.entries(secret.data ?? {})) out.set(k, Buffer.from(v, 'base64'));
  for (const [k, v] of Object.entries(secret.stringData ?? {})) out.set(k, Buffer.from(v));
  return out;
}

async function orMissing<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (httpStatus(err) === 404) return undefined;
    throw err;
  }
}

/** Reads objects from the API; a missing required object is a retryable config error. */
export function apiObjectSource(core: CoreV1Api, caCertPath: string): ObjectSource {
  return {
    async configMap(namespace, name, optional) {
      const cm = await orMissing(() => core.readNamespacedConfigMap({ namespace, name }));
      if (cm) return configMapData(cm);
      if (name === ROOT_CA_CONFIGMAP) {
        return new Map([['ca.crt', readFileSync(caCertPath)]]);
      }
      if (optional) return undefined;
      throw new PodConfigError('CreateContainerConfigError', `configmap "${name}" not found`, true);
    },
    async secret(namespace, name, optional) {
      const secret = await orMissing(() => core.readNamespacedSecret({ namespace, name }));
      if (secret) return secretData(secret);
      if (optional) return undefined;
      throw new PodConfigError('CreateContainerConfigError', `secret "${name}" not found`, true);
    },
  };
}
