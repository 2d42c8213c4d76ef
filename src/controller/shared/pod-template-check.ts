import type { V1Container, V1PodTemplateSpec } from '@kubernetes/client-node';
import {
  AGENT_CONTAINER_NAME,
  RESERVED_MOUNT_PATHS as RESERVED_PATHS,
  RESERVED_VOLUME_NAMES,
  RUNNER_INIT_CONTAINER_NAME as INIT_CONTAINER_NAME,
} from '../../api/run-pod.js';

const RESERVED_VOLUMES = new Set<string>(RESERVED_VOLUME_NAMES);
/** Where the controller mounts its own volumes: a template mount there would clash. */
const RESERVED_MOUNT_PATHS = new Set<string>(RESERVED_PATHS);

function mountProblems(container: V1Container, where: string): string[] {
  return (container.volumeMounts ?? [])
    .filter((mount) => RESERVED_MOUNT_PATHS.has(mount.mountPath.replace(/\/+$/, '')))
    .map(
      (mount) =>
        `${where}.volumeMounts[${mount.name}]: the mount path ${mount.mountPath} is reserved by Lorenz`,
    );
}

function containerProblems(container: V1Container, where: string): string[] {
  const problems: string[] = [];
  const security = container.securityContext;
  if (security?.privileged === true) problems.push(`${where}: privileged containers are refused`);
  if (security?.allowPrivilegeEscalation === true) {
    problems.push(`${where}: allowPrivilegeEscalation must not be true`);
  }
  if ((security?.capabilities?.add ?? []).length > 0) {
    problems.push(`${where}: adding capabilities is refused (all are dropped)`);
  }
  if (security?.runAsNonRoot === false || security?.runAsUser === 0) {
    problems.push(`${where}: run Pods must not run as root`);
  }
  return problems;
}

/**
 * Why a Workflow's podTemplate cannot be used for run Pods, one reason per problem; empty
 * when it is fine. The controller adds the runner, the volumes and the security defaults,
 * so anything that would undo them (privilege, host access, an API token in the agent
 * container, a name clash with what we add) is refused rather than silently overridden.
 */
export function podTemplateProblems(template: V1PodTemplateSpec | undefined): string[] {
  const spec = template?.spec;
  const containers = spec?.containers ?? [];
  const problems: string[] = [];
  const agent = containers.find((container) => container.name === AGENT_CONTAINER_NAME);
  if (!agent) {
    problems.push(
      `podTemplate.spec.containers: a container named "${AGENT_CONTAINER_NAME}" is required`,
    );
  } else if (!agent.image) {
    problems.push(`podTemplate.spec.containers[${AGENT_CONTAINER_NAME}].image is required`);
  }
  for (const container of containers) {
    const where = `podTemplate.spec.containers[${container.name}]`;
    if (container.name === INIT_CONTAINER_NAME) {
      problems.push(`${where}: the name "${INIT_CONTAINER_NAME}" is reserved for the runner`);
    } else if (container.name !== AGENT_CONTAINER_NAME) {
      problems.push(`${where}: only the container named "${AGENT_CONTAINER_NAME}" is supported`);
    }
    problems.push(...containerProblems(container, where), ...mountProblems(container, where));
  }
  if ((spec?.initContainers ?? []).length > 0) {
    problems.push('podTemplate.spec.initContainers: not supported (the runner installs itself)');
  }
  if (spec?.automountServiceAccountToken === true) {
    problems.push(
      'podTemplate.spec.automountServiceAccountToken: must not be true (the agent gets no Kubernetes credentials)',
    );
  }
  for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (spec?.[field] === true)
      problems.push(`podTemplate.spec.${field}: host namespaces are refused`);
  }
  const podSecurity = spec?.securityContext;
  if (podSecurity?.runAsNonRoot === false || podSecurity?.runAsUser === 0) {
    problems.push('podTemplate.spec.securityContext: run Pods must not run as root');
  }
  for (const volume of spec?.volumes ?? []) {
    if (volume.hostPath) {
      problems.push(`podTemplate.spec.volumes[${volume.name}]: hostPath volumes are refused`);
    }
    if (RESERVED_VOLUMES.has(volume.name)) {
      problems.push(`podTemplate.spec.volumes[${volume.name}]: the name is reserved by Lorenz`);
    }
  }
  return problems;
}
