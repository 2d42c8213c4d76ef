import { readFileSync } from 'node:fs';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import { resolveFieldPath, resolveResourceField } from './field-ref.js';
import type { ObjectSource } from './objects.js';
import { PodConfigError } from './types.js';

/**
 * HOME as a runtime derives it: the user's entry in the "image's" (here the host's)
 * /etc/passwd, else "/".
 */
export function homeFor(uid: number | undefined): string {
  const id = uid ?? 0;
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const fields = line.split(':');
      if (fields[2] === String(id) && fields[5]) return fields[5];
    }
  } catch {
    // No passwd file: fall through to the runtime default.
  }
  return id === 0 ? '/root' : '/';
}

/** What every container sees before its own env: the host fs has no image ENV. */
export function baseEnv(pod: V1Pod, apiServer: string, uid?: number): Map<string, string> {
  const url = new URL(apiServer);
  const port = url.port || '443';
  return new Map([
    ['PATH', '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
    ['HOSTNAME', pod.spec?.hostname ?? pod.metadata?.name ?? ''],
    ['HOME', homeFor(uid)],
    ['KUBERNETES_SERVICE_HOST', url.hostname],
    ['KUBERNETES_SERVICE_PORT', port],
    ['KUBERNETES_SERVICE_PORT_HTTPS', port],
    ['KUBERNETES_PORT', `tcp://${url.hostname}:${port}`],
  ]);
}

/**
 * Expands $(NAME) from already defined variables; $$ escapes; unknown references stay as
 * written (the kubelet's rules for env values, command and args).
 */
export function expandVars(input: string, vars: ReadonlyMap<string, string>): string {
  return input.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name?: string) => {
    if (match === '$$') return '$';
    const value = name === undefined ? undefined : vars.get(name);
    return value ?? match;
  });
}

function missingKey(kind: string, ns: string, name: string, key: string): PodConfigError {
  return new PodConfigError(
    'CreateContainerConfigError',
    `couldn't find key ${key} in ${kind} ${ns}/${name}`,
    true,
  );
}

/** The container's full environment: base, then envFrom, then env (later wins). */
export async function resolveEnv(
  pod: V1Pod,
  container: V1Container,
  objects: ObjectSource,
  base: Map<string, string>,
): Promise<Map<string, string>> {
  const ns = pod.metadata?.namespace ?? 'default';
  const vars = new Map(base);
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    let data;
    if (from.configMapRef) {
      const ref = from.configMapRef;
      data = await objects.configMap(ns, ref.name ?? '', ref.optional ?? false);
    } else if (from.secretRef) {
      const ref = from.secretRef;
      data = await objects.secret(ns, ref.name ?? '', ref.optional ?? false);
    }
    for (const [k, v] of data ?? []) vars.set(prefix + k, v.toString());
  }
  for (const env of container.env ?? []) {
    const source = env.valueFrom;
    if (!source) {
      vars.set(env.name, expandVars(env.value ?? '', vars));
      continue;
    }
    if (source.fieldRef) {
      vars.set(env.name, resolveFieldPath(pod, source.fieldRef.fieldPath, false));
    } else if (source.resourceFieldRef) {
      const target = source.resourceFieldRef.containerName
        ? [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])].find(
            (c) => c.name === source.resourceFieldRef?.containerName,
          )
        : container;
      vars.set(env.name, resolveResourceField(target, source.resourceFieldRef));
    } else if (source.configMapKeyRef) {
      const ref = source.configMapKeyRef;
      const optional = ref.optional ?? false;
      const data = await objects.configMap(ns, ref.name ?? '', optional);
      const value = data?.get(ref.key);
      if (value !== undefined) vars.set(env.name, value.toString());
      else if (data && !optional) throw missingKey('ConfigMap', ns, ref.name ?? '', ref.key);
    } else if (source.secretKeyRef) {
      const ref = source.secretKeyRef;
      const optional = ref.optional ?? false;
      const data = await objects.secret(ns, ref.name ?? '', optional);
      const value = data?.get(ref.key);
      if (value !== undefined) vars.set(env.name, value.toString());
      else if (data && !optional) throw missingKey('Secret', ns, ref.name ?? '', ref.key);
    } else {
      throw new PodConfigError(
        'CreateContainerConfigError',
        `env ${env.name}: unsupported valueFrom source on the process node`,
        false,
      );
    }
  }
  return vars;
}
