import { posix } from 'node:path';
import type { V1Container, V1PodTemplateSpec, V1Volume } from '@kubernetes/client-node';
import { RESTRICTED } from '../../api/pod-security.js';
import {
  AGENT_CONTAINER_NAME,
  RESERVED_MOUNT_PATHS,
  RESERVED_VOLUME_NAMES,
  RUNNER_INIT_CONTAINER_NAME as INIT_CONTAINER_NAME,
} from '../../api/run-pod.js';

/** What the operator allows beyond the restricted profile (its flags say). */
export interface PodTemplatePolicy {
  /** Service accounts run Pods may name; their tokens are never mounted. */
  allowedServiceAccounts: readonly string[];
}

export const DEFAULT_POD_TEMPLATE_POLICY: PodTemplatePolicy = {
  allowedServiceAccounts: ['default'],
};

const RESERVED_VOLUMES = new Set<string>(RESERVED_VOLUME_NAMES);
const PROFILE_TYPES = new Set<string>(RESTRICTED.profileTypes);
const SELINUX_TYPES = new Set<string>(RESTRICTED.seLinuxTypes);
const SAFE_SYSCTLS = new Set<string>(RESTRICTED.sysctls);
const VOLUME_SOURCES = new Set<string>(RESTRICTED.volumeSources);

/** `//lorenz/./inputs/` → `/lorenz/inputs`: how the kubelet will see the path. */
export function normalizeMountPath(path: string): string {
  const normalized = posix.normalize(`/${path}`).replace(/^\/+/, '/');
  return normalized.length > 1 ? normalized.replace(/\/+$/, '') : normalized;
}

/** A mount equal to, inside, or above a path Lorenz mounts at would clash with it. */
function clashesWith(path: string, reserved: string): boolean {
  const within = (inner: string, outer: string) =>
    outer === '/' ? true : inner === outer || inner.startsWith(`${outer}/`);
  return within(path, reserved) || within(reserved, path);
}

function mountProblems(container: V1Container, where: string): string[] {
  const problems: string[] = [];
  for (const mount of container.volumeMounts ?? []) {
    const path = normalizeMountPath(mount.mountPath);
    const reserved = RESERVED_MOUNT_PATHS.find((candidate) => clashesWith(path, candidate));
    if (reserved) {
      problems.push(
        `${where}.volumeMounts[${mount.name}]: the mount path ${mount.mountPath} is reserved by Lorenz (it is, is inside or is above ${reserved})`,
      );
    }
  }
  return problems;
}

/** Fields of the restricted profile shared by the Pod and the container security context. */
function profileProblems(
  context:
    | {
        seccompProfile?: { type: string };
        appArmorProfile?: { type: string };
        seLinuxOptions?: { user?: string; role?: string; type?: string };
      }
    | undefined,
  where: string,
): string[] {
  const problems: string[] = [];
  for (const field of ['seccompProfile', 'appArmorProfile'] as const) {
    const type = context?.[field]?.type;
    if (type !== undefined && !PROFILE_TYPES.has(type)) {
      problems.push(`${where}.${field}: type ${type} is refused (RuntimeDefault or Localhost)`);
    }
  }
  const seLinux = context?.seLinuxOptions;
  if (seLinux?.user !== undefined || seLinux?.role !== undefined) {
    problems.push(`${where}.seLinuxOptions: user and role must not be set`);
  }
  if (seLinux?.type !== undefined && !SELINUX_TYPES.has(seLinux.type)) {
    problems.push(
      `${where}.seLinuxOptions.type: ${seLinux.type} is refused (${RESTRICTED.seLinuxTypes.join(', ')})`,
    );
  }
  return problems;
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
  if (security?.procMount !== undefined && security.procMount !== 'Default') {
    problems.push(`${where}.securityContext.procMount: must be Default`);
  }
  return [...problems, ...profileProblems(security, `${where}.securityContext`)];
}

function volumeProblems(volume: V1Volume): string[] {
  const where = `podTemplate.spec.volumes[${volume.name}]`;
  const problems: string[] = [];
  if (RESERVED_VOLUMES.has(volume.name)) problems.push(`${where}: the name is reserved by Lorenz`);
  if (volume.hostPath) problems.push(`${where}: hostPath volumes are refused`);
  for (const [source, value] of Object.entries(volume)) {
    if (value === undefined || source === 'name' || source === 'hostPath') continue;
    if (VOLUME_SOURCES.has(source)) continue;
    problems.push(
      `${where}: ${source} volumes are refused (run Pods are restricted to ${RESTRICTED.volumeSources.join(', ')})`,
    );
  }
  if ((volume.projected?.sources ?? []).some((source) => source.serviceAccountToken)) {
    problems.push(
      `${where}: serviceAccountToken projections are refused (the agent gets no Kubernetes credentials)`,
    );
  }
  return problems;
}

/**
 * Why a Workflow's podTemplate cannot be used for run Pods, one reason per problem; empty
 * when it is fine. The controller adds the runner, the volumes and the security defaults,
 * so anything that would undo them (privilege, host access, an API token in the agent
 * container, a weaker profile than "restricted", a name or path clash with what we add)
 * is refused rather than silently overridden.
 */
export function podTemplateProblems(
  template: V1PodTemplateSpec | undefined,
  policy: PodTemplatePolicy = DEFAULT_POD_TEMPLATE_POLICY,
): string[] {
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
  const account = spec?.serviceAccountName;
  if (account !== undefined && !policy.allowedServiceAccounts.includes(account)) {
    problems.push(
      `podTemplate.spec.serviceAccountName: ${account} is not allowed for run Pods (allowed: ${policy.allowedServiceAccounts.join(', ')}; the controller's --allowed-service-accounts)`,
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
  problems.push(...profileProblems(podSecurity, 'podTemplate.spec.securityContext'));
  for (const sysctl of podSecurity?.sysctls ?? []) {
    if (!SAFE_SYSCTLS.has(sysctl.name)) {
      problems.push(
        `podTemplate.spec.securityContext.sysctls[${sysctl.name}]: only the safe namespaced sysctls are allowed`,
      );
    }
  }
  for (const volume of spec?.volumes ?? []) problems.push(...volumeProblems(volume));
  return problems;
}
