import type { V1PodSecurityContext, V1SecurityContext } from '@kubernetes/client-node';
import { RESTRICTED } from '../../api/pod-security.js';

/**
 * The security contexts of a run Pod: Pod Security Standards "restricted", forced back
 * whatever the Workflow's podTemplate says. The template check (shared/pod-template-check)
 * refuses anything weaker first, with the field's path; this is the second line, so a field
 * the check does not know yet cannot loosen the Pod either.
 */

/** The non-root uid run Pods use unless the template picks one (distroless "nonroot"). */
export const DEFAULT_RUN_AS_USER = 65532;

const RESTRICTED_PROFILES = new Set<string>(RESTRICTED.profileTypes);
const RESTRICTED_SELINUX = new Set<string>(RESTRICTED.seLinuxTypes);
const RESTRICTED_SYSCTLS = new Set<string>(RESTRICTED.sysctls);

type Profile = { type: string; localhostProfile?: string };
type SeLinux = { level?: string; type?: string; user?: string; role?: string };

/** A profile of the restricted set, else RuntimeDefault. */
const restrictedProfile = (profile: Profile | undefined): Profile | undefined =>
  profile && !RESTRICTED_PROFILES.has(profile.type) ? { type: 'RuntimeDefault' } : profile;

/** Only a level and a container type of the restricted set survive. */
function restrictedSeLinux(options: SeLinux | undefined): SeLinux | undefined {
  if (!options) return undefined;
  const kept: SeLinux = {};
  if (options.level !== undefined) kept.level = options.level;
  if (options.type !== undefined && RESTRICTED_SELINUX.has(options.type)) kept.type = options.type;
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/**
 * The restricted container security context (Pod Security Standards "restricted"). The
 * template check refuses anything weaker first; this forces the profile regardless, so a
 * field the check does not know yet cannot loosen it either.
 */
export function restrictedContainer(base: V1SecurityContext | undefined): V1SecurityContext {
  const { procMount: _procMount, windowsOptions: _windows, ...rest } = base ?? {};
  return {
    ...rest,
    privileged: false,
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    readOnlyRootFilesystem: base?.readOnlyRootFilesystem ?? false,
    runAsNonRoot: true,
    seccompProfile: { type: 'RuntimeDefault' },
    appArmorProfile: restrictedProfile(base?.appArmorProfile),
    seLinuxOptions: restrictedSeLinux(base?.seLinuxOptions),
  };
}

/** The restricted Pod security context, the same way. */
export function restrictedPod(
  base: V1PodSecurityContext | undefined,
  runAsUser: number | undefined,
  /**
   * The volume holds a tree whose modes are checked (a snapshot's, docs/snapshots.md): the
   * kubelet must not give the group write on every file as it mounts, which it skips only
   * when the root already matches (OnRootMismatch), unless the template chose otherwise.
   */
  keepVolumeModes = false,
): V1PodSecurityContext {
  const { windowsOptions: _windows, ...rest } = base ?? {};
  const sysctls = base?.sysctls?.filter((sysctl) => RESTRICTED_SYSCTLS.has(sysctl.name));
  return {
    ...rest,
    runAsNonRoot: true,
    runAsUser: runAsUser ?? DEFAULT_RUN_AS_USER,
    fsGroup: base?.fsGroup ?? runAsUser ?? DEFAULT_RUN_AS_USER,
    ...(keepVolumeModes && base?.fsGroupChangePolicy === undefined
      ? { fsGroupChangePolicy: 'OnRootMismatch' }
      : {}),
    seccompProfile: { type: 'RuntimeDefault' },
    appArmorProfile: restrictedProfile(base?.appArmorProfile),
    seLinuxOptions: restrictedSeLinux(base?.seLinuxOptions),
    sysctls: sysctls && sysctls.length > 0 ? sysctls : undefined,
  };
}
