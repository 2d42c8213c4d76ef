import { z } from 'zod';
import { upstreamObject } from './meta.js';
import { RESERVED_VOLUME_NAMES, RUNNER_INIT_CONTAINER_NAME } from './run-pod.js';

/**
 * The security-relevant parts of a run Pod template: declared in the CRD so the apiserver
 * keeps them (an undeclared field is pruned, and a pruned `privileged: true` would pass
 * unseen), and refused at admission with CEL when no run Pod may ever have them. The
 * controller checks the same again at reconcile (podTemplateProblems) for objects admitted
 * before these rules existed.
 */

/** A CEL rule on the field itself, so the apiserver's error names the field's path. */
export function refused<T extends z.ZodType>(schema: T, rule: string, message: string): T {
  return schema.meta({ 'x-kubernetes-validations': [{ rule, message }] });
}

const celList = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;

/**
 * The Pod Security Standards "restricted" profile, field by field, where it allows a choice.
 * Admission refuses the rest (CEL below), the controller again at reconcile
 * (podTemplateProblems), and the pod builder forces the defaults back.
 */
export const RESTRICTED = {
  /** seccomp and AppArmor: never Unconfined. */
  profileTypes: ['RuntimeDefault', 'Localhost'],
  /** SELinux types a container may ask for (user and role may not be set at all). */
  seLinuxTypes: ['container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t'],
  /** The namespaced sysctls the baseline profile calls safe. */
  sysctls: [
    'kernel.shm_rmid_forced',
    'net.ipv4.ip_local_port_range',
    'net.ipv4.ip_unprivileged_port_start',
    'net.ipv4.tcp_syncookies',
    'net.ipv4.ping_group_range',
    'net.ipv4.ip_local_reserved_ports',
    'net.ipv4.tcp_keepalive_time',
    'net.ipv4.tcp_fin_timeout',
    'net.ipv4.tcp_keepalive_intvl',
    'net.ipv4.tcp_keepalive_probes',
  ],
  /** Volume sources a run Pod may use. */
  volumeSources: [
    'configMap',
    'csi',
    'downwardAPI',
    'emptyDir',
    'ephemeral',
    'persistentVolumeClaim',
    'projected',
    'secret',
  ],
} as const;

const profileSchema = (what: string) =>
  refused(
    z.object({
      type: z.string().max(64).describe(`${what} profile type (RuntimeDefault or Localhost).`),
      localhostProfile: z
        .string()
        .max(4096)
        .optional()
        .describe('Profile on the node, for Localhost.'),
    }),
    `self.type in ${celList(RESTRICTED.profileTypes)}`,
    `the ${what} profile must be RuntimeDefault or Localhost: run Pods are restricted`,
  ).describe(`The ${what} profile (the controller sets RuntimeDefault for seccomp).`);

const seLinuxOptionsSchema = refused(
  z.object({
    user: z.string().optional().describe('SELinux user label: must not be set.'),
    role: z.string().optional().describe('SELinux role label: must not be set.'),
    type: z
      .string()
      .optional()
      .describe(`SELinux type: ${RESTRICTED.seLinuxTypes.join(', ')}.`),
    level: z.string().optional().describe('SELinux level label.'),
  }),
  `!has(self.user) && !has(self.role) && (!has(self.type) || self.type in ${celList(RESTRICTED.seLinuxTypes)})`,
  `seLinuxOptions may set only level and a container type (${RESTRICTED.seLinuxTypes.join(', ')}): run Pods are restricted`,
).describe('SELinux labels (core/v1 SELinuxOptions).');

const runAsUserSchema = refused(
  z.int().min(0),
  'self != 0',
  'run Pods must not run as root (runAsUser 0)',
).describe('The uid to run as; never 0.');

const runAsNonRootSchema = refused(
  z.boolean(),
  'self',
  'runAsNonRoot must not be false: run Pods never run as root',
).describe('Must be true when set; the controller sets it.');

export const containerSecurityContextSchema = z
  .object({
    privileged: refused(
      z.boolean(),
      '!self',
      'privileged containers are refused: run Pods are restricted',
    ).describe('Must be false when set.'),
    allowPrivilegeEscalation: refused(
      z.boolean(),
      '!self',
      'allowPrivilegeEscalation must not be true: run Pods are restricted',
    ).describe('Must be false when set.'),
    capabilities: z
      .object({
        add: refused(
          z.array(z.string().max(64)).max(64),
          'size(self) == 0',
          'adding capabilities is refused: run Pods drop all of them',
        ).describe('Must be empty.'),
        drop: z.array(z.string().max(64)).max(64).describe('Capabilities dropped (ALL is forced).'),
      })
      .partial()
      .describe('Linux capabilities; the controller drops all.'),
    runAsUser: runAsUserSchema,
    runAsGroup: z.int().min(0).describe('The gid to run as.'),
    runAsNonRoot: runAsNonRootSchema,
    readOnlyRootFilesystem: z.boolean().describe('Mount the root filesystem read-only.'),
    seccompProfile: profileSchema('seccomp'),
    appArmorProfile: profileSchema('AppArmor'),
    seLinuxOptions: seLinuxOptionsSchema,
  })
  .partial()
  .describe(
    'Security context of the agent container (core/v1 SecurityContext); the controller adds the restricted defaults.',
  );

export const podSecurityContextSchema = z
  .object({
    runAsUser: runAsUserSchema,
    runAsGroup: z.int().min(0).describe('The gid to run as.'),
    runAsNonRoot: runAsNonRootSchema,
    fsGroup: z.int().min(0).describe('The group owning the volumes.'),
    fsGroupChangePolicy: z
      .enum(['OnRootMismatch', 'Always'])
      .describe('When to change volume ownership.'),
    supplementalGroups: z.array(z.int().min(0)).max(64).describe('Extra gids of the processes.'),
    seccompProfile: profileSchema('seccomp'),
    appArmorProfile: profileSchema('AppArmor'),
    seLinuxOptions: seLinuxOptionsSchema,
    sysctls: z
      .array(
        z.object({
          name: refused(
            z.string().max(253),
            `self in ${celList(RESTRICTED.sysctls)}`,
            'only the safe namespaced sysctls of the baseline profile are allowed',
          ).describe('Sysctl name (one of the safe set).'),
          value: z.string().max(1024),
        }),
      )
      .max(64)
      .describe('Namespaced sysctls (the safe set only).'),
  })
  .partial()
  .describe('Security context of the run Pod (core/v1 PodSecurityContext).');

export const volumeMountSchema = z
  .object({
    name: z.string().min(1).max(63).describe('Name of a volume of the template.'),
    mountPath: z.string().min(1).max(4096).describe('Where the volume is mounted.'),
    readOnly: z.boolean().optional().describe('Mount read-only.'),
    subPath: z.string().optional().describe('Path within the volume.'),
    subPathExpr: z.string().optional().describe('Expanded path within the volume.'),
    mountPropagation: z
      .enum(['None', 'HostToContainer'])
      .optional()
      .describe('Mount propagation (Bidirectional needs privilege and is refused).'),
    recursiveReadOnly: z
      .enum(['Disabled', 'IfPossible', 'Enabled'])
      .optional()
      .describe('Recursive read-only mounts.'),
  })
  .describe('A volume mount of the agent container (core/v1 VolumeMount).');

export const volumeSchema = refused(
  z
    .object({
      name: refused(
        z.string().min(1).max(63),
        `!(self in ${celList(RESERVED_VOLUME_NAMES)})`,
        `the volume name is reserved by Lorenz (${RESERVED_VOLUME_NAMES.join(', ')})`,
      ).describe('Volume name; the names Lorenz adds are reserved.'),
      hostPath: z
        .object({
          path: z.string().describe('Path on the node.'),
          type: z.string().optional().describe('hostPath type.'),
        })
        .optional()
        .describe('Refused: run Pods never mount the node.'),
      projected: refused(
        z
          .object({
            sources: z
              .array(
                z
                  .object({
                    serviceAccountToken: upstreamObject(
                      'Refused (declared, x-kubernetes-preserve-unknown-fields, so that CEL can see it): the agent gets no Kubernetes credentials.',
                    ).optional(),
                  })
                  .loose()
                  .meta({ 'x-kubernetes-preserve-unknown-fields': true })
                  .describe(
                    'A projection source (core/v1 VolumeProjection), kept as is (x-kubernetes-preserve-unknown-fields); serviceAccountToken is refused.',
                  ),
              )
              .max(64)
              .optional()
              .describe('The sources; serviceAccountToken is refused.'),
          })
          .loose()
          .meta({ 'x-kubernetes-preserve-unknown-fields': true }),
        '!has(self.sources) || self.sources.all(s, !has(s.serviceAccountToken))',
        'serviceAccountToken projections are refused: the agent gets no Kubernetes credentials',
      )
        .optional()
        .describe(
          'A projected volume (core/v1 ProjectedVolumeSource), kept as is (x-kubernetes-preserve-unknown-fields) but for serviceAccountToken sources, which are refused.',
        ),
    })
    .loose()
    .meta({ 'x-kubernetes-preserve-unknown-fields': true }),
  '!has(self.hostPath)',
  'hostPath volumes are refused: run Pods never mount the node',
).describe(
  `A volume of the run Pod (core/v1 Volume). The source is kept as is (x-kubernetes-preserve-unknown-fields) and validated by the apiserver when the Pod is created. hostPath and service-account token projections are refused here; the controller allows only ${RESTRICTED.volumeSources.join(', ')}.`,
);

/** The container name the runner's init container uses. */
export const containerNameSchema = refused(
  z.string().min(1).max(63),
  `self != '${RUNNER_INIT_CONTAINER_NAME}'`,
  `the container name "${RUNNER_INIT_CONTAINER_NAME}" is reserved for the Lorenz runner`,
);

/** hostNetwork, hostPID, hostIPC: never true. */
export const hostNamespaceSchema = (field: string) =>
  refused(
    z.boolean(),
    '!self',
    `${field} must not be true: run Pods never share the node's namespaces`,
  ).describe('Must be false when set.');

export const automountTokenSchema = refused(
  z.boolean(),
  '!self',
  'automountServiceAccountToken must not be true: the agent gets no Kubernetes credentials',
).describe('Must be false when set; the controller sets false.');
