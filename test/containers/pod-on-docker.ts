// Runs one container of a run Pod, as the pod builder made it, on the Docker engine: the
// Pod's and the container's securityContext become the engine's own flags, so what the
// kernel enforces is what the Pod asks for (the process node enforces none of it). Volumes
// are host directories the test prepares, named as in the Pod.
import { spawnSync } from 'node:child_process';
import type { V1Container, V1Pod } from '@kubernetes/client-node';

export interface DockerResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function docker(args: string[], timeoutMs = 120_000): DockerResult {
  const result = spawnSync('docker', args, { encoding: 'utf8', timeout: timeoutMs });
  if (result.error)
    throw new Error(`docker ${args.slice(0, 3).join(' ')}: ${result.error.message}`);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The engine's flags for what the Pod's and the container's securityContext ask. */
export function securityFlags(pod: V1Pod, container: V1Container): string[] {
  const podSecurity = pod.spec?.securityContext;
  const security = container.securityContext;
  const user = security?.runAsUser ?? podSecurity?.runAsUser;
  const group = security?.runAsGroup ?? podSecurity?.runAsGroup ?? user;
  const flags: string[] = [];
  if (user !== undefined) flags.push('--user', `${user}:${group ?? user}`);
  if (podSecurity?.fsGroup !== undefined) flags.push('--group-add', String(podSecurity.fsGroup));
  for (const capability of security?.capabilities?.drop ?? []) flags.push('--cap-drop', capability);
  for (const capability of security?.capabilities?.add ?? []) flags.push('--cap-add', capability);
  if (security?.allowPrivilegeEscalation === false)
    flags.push('--security-opt', 'no-new-privileges');
  if (security?.readOnlyRootFilesystem) flags.push('--read-only');
  // RuntimeDefault is the engine's default seccomp profile; anything else is not modelled.
  const seccomp = security?.seccompProfile?.type ?? podSecurity?.seccompProfile?.type;
  if (seccomp !== undefined && seccomp !== 'RuntimeDefault')
    throw new Error(`seccomp profile ${seccomp} is not modelled by this harness`);
  return flags;
}

/**
 * `docker run` of one container: its image, command and working directory, its
 * securityContext as flags, its volume mounts from `volumes` (Pod volume name → host path;
 * a mount of a volume not given is an error naming it), no network; `extraArgs` go after
 * the command's own, `dockerArgs` to the engine (what the kubelet adds: the termination log).
 */
export function runContainer(
  pod: V1Pod,
  container: V1Container,
  volumes: Record<string, string>,
  extraArgs: string[] = [],
  dockerArgs: string[] = [],
): DockerResult {
  const mounts = (container.volumeMounts ?? []).flatMap((mount) => {
    const host = volumes[mount.name];
    if (host === undefined)
      throw new Error(`container ${container.name} mounts volume ${mount.name}: none given`);
    return ['--volume', `${host}:${mount.mountPath}${mount.readOnly ? ':ro' : ''}`];
  });
  // Plain values only: the harness has no Secrets or field references to resolve.
  const env = (container.env ?? []).flatMap((variable) =>
    variable.value === undefined ? [] : ['--env', `${variable.name}=${variable.value}`],
  );
  const [entrypoint, ...args] = [...(container.command ?? []), ...extraArgs];
  if (entrypoint === undefined || container.image === undefined)
    throw new Error(`container ${container.name} has no command or no image`);
  return docker([
    'run',
    '--rm',
    '--network',
    'none',
    ...securityFlags(pod, container),
    ...mounts,
    ...env,
    ...dockerArgs,
    ...(container.workingDir ? ['--workdir', container.workingDir] : []),
    '--entrypoint',
    entrypoint,
    container.image,
    ...args,
  ]);
}
