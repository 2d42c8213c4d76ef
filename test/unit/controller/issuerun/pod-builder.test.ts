import { describe, expect, it } from 'vitest';
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { buildRunPod, workspaceClaim } from '../../../../src/controller/issuerun/pod-builder.js';
import { podTemplateProblems } from '../../../../src/controller/shared/pod-template-check.js';
import { DEFAULT_OPERATOR_IMAGE } from '../../../../src/controller/shared/constants.js';
import { isLorenzError } from '../../../../src/workflow/errors.js';

const template: V1PodTemplateSpec = {
  metadata: { labels: { team: 'a' } },
  spec: {
    serviceAccountName: 'agents',
    nodeSelector: { pool: 'agents' },
    containers: [
      {
        name: 'agent',
        image: 'node:24',
        env: [{ name: 'FOO', value: 'bar' }],
        envFrom: [{ secretRef: { name: 'keys' } }],
        resources: { limits: { memory: '1Gi' } },
      },
    ],
  },
};

const base = {
  run: { name: 'eng-1', namespace: 'ns', uid: 'uid-1' },
  workflowName: 'wf',
  podTemplate: template,
  slot: 0,
  attempt: 1,
  operatorImage: DEFAULT_OPERATOR_IMAGE,
  inputsConfigMap: 'eng-1-inputs',
  inputsDigest: 'sha256:abc',
  issueState: 'Todo',
  hooksTimeoutMs: 60_000,
  activeDeadlineSeconds: 3600,
  // The operator was told (--allowed-service-accounts) that run Pods may use `agents`.
  policy: { allowedServiceAccounts: ['default', 'agents'] },
};

describe('run pod builder: agent tools', () => {
  const tools = {
    url: 'http://lorenz-tools.lorenz-system.svc:8090/mcp',
    serverName: 'lorenz_linear',
    secretName: 'eng-1-tools-1',
  };
  const withTools = buildRunPod({ ...base, tools });
  const agent = withTools.spec!.containers[0]!;

  it('mounts the token Secret read-only in the agent container only, readable through fsGroup', () => {
    const volume = withTools.spec!.volumes!.find((each) => each.name === 'lorenz-tools');
    expect(volume).toEqual({
      name: 'lorenz-tools',
      secret: { secretName: 'eng-1-tools-1', defaultMode: 0o440 },
    });
    // Group-readable: the runner's uid is in the Pod's fsGroup, which the kubelet gives the files.
    expect(withTools.spec!.securityContext?.fsGroup).toBe(65532);
    expect(agent.volumeMounts).toContainEqual({
      name: 'lorenz-tools',
      mountPath: '/lorenz/tools',
      readOnly: true,
    });
    for (const init of withTools.spec!.initContainers ?? []) {
      expect((init.volumeMounts ?? []).map((mount) => mount.name)).not.toContain('lorenz-tools');
    }
  });

  it("passes the gateway to the runner by flags, the token only as a file's path", () => {
    expect(agent.command?.slice(-6)).toEqual([
      '--tools-url',
      tools.url,
      '--tools-token-file',
      '/lorenz/tools/token',
      '--tools-server-name',
      'lorenz_linear',
    ]);
    const env = JSON.stringify([agent.env, agent.envFrom]);
    expect(env).not.toContain('tools');
  });

  it('adds nothing when tools are off', () => {
    const pod = buildRunPod(base);
    expect(JSON.stringify(pod)).not.toMatch(/tools/);
  });
});

describe('run pod builder: git credentials', () => {
  const withGit = buildRunPod({ ...base, gitCredentialsSecret: 'git-creds' });
  const agent = withGit.spec!.containers[0]!;

  it('mounts the Secret read-only at /lorenz/git-credentials in the agent container only', () => {
    expect(withGit.spec!.volumes).toContainEqual({
      name: 'lorenz-git-credentials',
      secret: { secretName: 'git-creds', defaultMode: 0o440 },
    });
    expect(agent.volumeMounts).toContainEqual({
      name: 'lorenz-git-credentials',
      mountPath: '/lorenz/git-credentials',
      readOnly: true,
    });
    for (const init of withGit.spec!.initContainers ?? []) {
      expect(JSON.stringify(init)).not.toContain('git-credentials');
    }
  });

  it('passes the directory by flag; no variable carries the Secret', () => {
    expect(agent.command?.slice(-2)).toEqual(['--git-credentials', '/lorenz/git-credentials']);
    const env = JSON.stringify([agent.env, agent.envFrom]);
    expect(env).not.toContain('git-creds');
    expect(env).not.toContain('git-credentials');
  });

  it('adds nothing without a Secret', () => {
    expect(JSON.stringify(buildRunPod(base))).not.toContain('git-credentials');
  });

  it('reserves the mount path and the volume name from the podTemplate', () => {
    const mounted = podTemplateProblems({
      spec: {
        containers: [
          {
            name: 'agent',
            volumeMounts: [{ name: 'cache', mountPath: '/lorenz/git-credentials/github.com' }],
          },
        ],
        volumes: [{ name: 'cache', emptyDir: {} }],
      },
    });
    expect(mounted.join('\n')).toMatch(
      /reserved by Lorenz \(it is, is inside or is above \/lorenz\/git-credentials\)/,
    );
    const named = podTemplateProblems({
      spec: {
        containers: [{ name: 'agent' }],
        volumes: [{ name: 'lorenz-git-credentials', emptyDir: {} }],
      },
    });
    expect(named.join('\n')).toContain('lorenz-git-credentials');
  });
});

describe('run pod builder', () => {
  const pod = buildRunPod(base);
  const spec = pod.spec!;
  const agent = spec.containers[0]!;

  it('names, labels and owns the Pod deterministically', () => {
    expect(pod.metadata?.name).toBe('eng-1-0-1');
    expect(pod.metadata?.labels).toEqual({
      team: 'a',
      'lorenz.dev/issuerun': 'eng-1',
      'lorenz.dev/workflow': 'wf',
      'lorenz.dev/slot': '0',
      'lorenz.dev/attempt': '1',
      'app.kubernetes.io/managed-by': 'lorenz',
    });
    expect(pod.metadata?.annotations?.['lorenz.dev/issue-state']).toBe('Todo');
    expect(pod.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'lorenz.dev/v1alpha1',
        kind: 'IssueRun',
        name: 'eng-1',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(buildRunPod(base)).toEqual(pod);
  });

  it('installs the runner with an init container and runs it in the user image', () => {
    expect(spec.initContainers?.[0]?.image).toBe(DEFAULT_OPERATOR_IMAGE);
    expect(spec.initContainers?.[0]?.command).toEqual([
      'sh',
      '-c',
      [
        'set -e',
        'cp /lorenz/lorenz.js /lorenz/lorenz /lorenz/scripted-agent.mjs /lorenz-bin/',
        'for file in /lorenz/lorenz.snapshot.blob /lorenz/lorenz.snapshot.key; do',
        '  if [ -e "$file" ]; then cp "$file" /lorenz-bin/; fi',
        'done',
      ].join('\n'),
    ]);
    expect(agent.image).toBe('node:24');
    expect(agent.command?.slice(0, 9)).toEqual([
      'sh',
      '/lorenz-bin/lorenz',
      'runner',
      '--inputs',
      '/lorenz/inputs',
      '--slot',
      '0',
      '--workspace',
      '/workspace',
    ]);
    expect(agent.env).toContainEqual({ name: 'FOO', value: 'bar' });
    expect(agent.envFrom).toEqual([
      { secretRef: { name: 'keys' } },
      { prefix: 'LORENZ_REDACT_FROM0_', secretRef: { name: 'keys', optional: true } },
    ]);
    expect(agent.resources).toEqual({ limits: { memory: '1Gi' } });
    expect(agent.terminationMessagePolicy).toBe('File');
  });

  it('mounts the inputs read-only, the issue state by downward API, and an emptyDir workspace', () => {
    const volumes = Object.fromEntries((spec.volumes ?? []).map((volume) => [volume.name, volume]));
    expect(volumes['lorenz-inputs']?.configMap?.name).toBe('eng-1-inputs');
    expect(volumes['workspace']?.emptyDir).toEqual({});
    expect(volumes['lorenz-podinfo']?.downwardAPI?.items?.[0]?.fieldRef?.fieldPath).toBe(
      "metadata.annotations['lorenz.dev/issue-state']",
    );
    const mounts = Object.fromEntries(
      (agent.volumeMounts ?? []).map((mount) => [mount.name, mount]),
    );
    expect(mounts['lorenz-inputs']).toMatchObject({ mountPath: '/lorenz/inputs', readOnly: true });
    expect(mounts['workspace']).toMatchObject({ mountPath: '/workspace' });
  });

  it('applies the restricted security defaults and the backstops', () => {
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.restartPolicy).toBe('Never');
    expect(spec.activeDeadlineSeconds).toBe(3600);
    expect(spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60 + 10);
    expect(spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    for (const container of [agent, spec.initContainers![0]!]) {
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        readOnlyRootFilesystem: false,
        privileged: false,
      });
    }
    expect(spec.serviceAccountName).toBe('agents');
    expect(spec.nodeSelector).toEqual({ pool: 'agents' });
  });

  it('keeps a runAsUser the template sets', () => {
    const custom = buildRunPod({
      ...base,
      podTemplate: { spec: { ...template.spec!, securityContext: { runAsUser: 1000 } } },
    });
    expect(custom.spec?.securityContext?.runAsUser).toBe(1000);
  });

  it('uses a claim per slot when the Workflow has a volumeClaimTemplate', () => {
    const claimSpec = {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
    };
    const withClaim = buildRunPod({ ...base, slot: 2, volumeClaimSpec: claimSpec });
    const workspace = withClaim.spec?.volumes?.find((volume) => volume.name === 'workspace');
    expect(workspace?.persistentVolumeClaim?.claimName).toBe('eng-1-2-workspace');
    const claim = workspaceClaim({ run: base.run, workflowName: 'wf', slot: 2, spec: claimSpec });
    expect(claim.metadata?.name).toBe('eng-1-2-workspace');
    expect(claim.spec).toEqual(claimSpec);
  });

  const agentWith = (extra: object): V1PodTemplateSpec => ({
    spec: { containers: [{ name: 'agent', image: 'x', ...extra }] },
  });
  it.each<[string, V1PodTemplateSpec | undefined, RegExp]>([
    ['no template', undefined, /a container named "agent" is required/],
    [
      'privileged',
      agentWith({ securityContext: { privileged: true } }),
      /privileged containers are refused/,
    ],
    [
      'hostPath',
      {
        spec: {
          containers: [{ name: 'agent', image: 'x' }],
          volumes: [{ name: 'h', hostPath: { path: '/' } }],
        },
      },
      /hostPath volumes are refused/,
    ],
    [
      'our container name',
      {
        spec: {
          containers: [
            { name: 'agent', image: 'x' },
            { name: 'install-runner', image: 'y' },
          ],
        },
      },
      /reserved for the runner/,
    ],
    [
      'token automount',
      { spec: { automountServiceAccountToken: true, containers: [{ name: 'agent', image: 'x' }] } },
      /automountServiceAccountToken: must not be true/,
    ],
    ['root', agentWith({ securityContext: { runAsUser: 0 } }), /must not run as root/],
    [
      'host network',
      { spec: { hostNetwork: true, containers: [{ name: 'agent', image: 'x' }] } },
      /host namespaces are refused/,
    ],
    [
      'host PID',
      { spec: { hostPID: true, containers: [{ name: 'agent', image: 'x' }] } },
      /hostPID: host namespaces are refused/,
    ],
    [
      'host IPC',
      { spec: { hostIPC: true, containers: [{ name: 'agent', image: 'x' }] } },
      /hostIPC: host namespaces are refused/,
    ],
    [
      'privilege escalation',
      agentWith({ securityContext: { allowPrivilegeEscalation: true } }),
      /allowPrivilegeEscalation must not be true/,
    ],
    [
      'added capabilities',
      agentWith({ securityContext: { capabilities: { add: ['NET_ADMIN'] } } }),
      /adding capabilities is refused/,
    ],
    [
      'a root pod security context',
      {
        spec: {
          securityContext: { runAsNonRoot: false },
          containers: [{ name: 'agent', image: 'x' }],
        },
      },
      /securityContext: run Pods must not run as root/,
    ],
    [
      'our volume name',
      {
        spec: {
          containers: [{ name: 'agent', image: 'x' }],
          volumes: [{ name: 'lorenz-inputs', emptyDir: {} }],
        },
      },
      /volumes\[lorenz-inputs\]: the name is reserved by Lorenz/,
    ],
    [
      'a mount on our mount path',
      agentWith({ volumeMounts: [{ name: 'cache', mountPath: '/workspace/' }] }),
      /volumeMounts\[cache\]: the mount path \/workspace\/ is reserved/,
    ],
    ...(
      [
        ['/lorenz-bin/.', '/lorenz-bin'],
        ['//lorenz/inputs', '/lorenz/inputs'],
        ['/lorenz/./podinfo/', '/lorenz/podinfo'],
        ['/lorenz-bin/lorenz.js', '/lorenz-bin'],
        ['/workspace/sub/dir', '/workspace'],
        ['/lorenz/x/../inputs', '/lorenz/inputs'],
        ['/lorenz', '/lorenz/inputs'],
        ['/', '/lorenz-bin'],
        ['/lorenz/tools', '/lorenz/tools'],
        ['/lorenz/tools/token', '/lorenz/tools'],
      ] as const
    ).map(
      ([mountPath, reserved]) =>
        [
          `a mount at ${mountPath}`,
          agentWith({ volumeMounts: [{ name: 'cache', mountPath }] }),
          new RegExp(`reserved by Lorenz \\(it is, is inside or is above ${reserved}\\)`),
        ] as [string, V1PodTemplateSpec, RegExp],
    ),
    [
      'a projected service-account token',
      {
        spec: {
          containers: [{ name: 'agent', image: 'x' }],
          volumes: [
            {
              name: 'token',
              projected: {
                sources: [
                  { configMap: { name: 'ca' } },
                  { serviceAccountToken: { path: 'token', audience: 'api' } },
                ],
              },
            },
          ],
        },
      },
      /volumes\[token\]: serviceAccountToken projections are refused/,
    ],
    [
      'a service account the operator does not allow',
      { spec: { serviceAccountName: 'admin', containers: [{ name: 'agent', image: 'x' }] } },
      /serviceAccountName: admin is not allowed for run Pods \(allowed: default, agents/,
    ],
    [
      'an unconfined AppArmor profile on the agent',
      agentWith({ securityContext: { appArmorProfile: { type: 'Unconfined' } } }),
      /securityContext\.appArmorProfile: type Unconfined is refused/,
    ],
    [
      'an unconfined seccomp profile on the Pod',
      {
        spec: {
          securityContext: { seccompProfile: { type: 'Unconfined' } },
          containers: [{ name: 'agent', image: 'x' }],
        },
      },
      /spec\.securityContext\.seccompProfile: type Unconfined is refused/,
    ],
    [
      'the spc_t SELinux type on the Pod',
      {
        spec: {
          securityContext: { seLinuxOptions: { type: 'spc_t' } },
          containers: [{ name: 'agent', image: 'x' }],
        },
      },
      /seLinuxOptions\.type: spc_t is refused/,
    ],
    [
      'an SELinux user on the agent',
      agentWith({ securityContext: { seLinuxOptions: { user: 'system_u' } } }),
      /seLinuxOptions: user and role must not be set/,
    ],
    [
      'an unmasked /proc',
      agentWith({ securityContext: { procMount: 'Unmasked' } }),
      /procMount: must be Default/,
    ],
    [
      'an unsafe sysctl',
      {
        spec: {
          securityContext: { sysctls: [{ name: 'kernel.msgmax', value: '1' }] },
          containers: [{ name: 'agent', image: 'x' }],
        },
      },
      /sysctls\[kernel\.msgmax\]: only the safe namespaced sysctls/,
    ],
    [
      'an NFS volume',
      {
        spec: {
          containers: [{ name: 'agent', image: 'x' }],
          volumes: [{ name: 'n', nfs: { server: 'nfs', path: '/' } }],
        },
      },
      /volumes\[n\]: nfs volumes are refused/,
    ],
  ])('refuses a template with %s, saying why', (_case, podTemplate, reason) => {
    expect(podTemplateProblems(podTemplate, base.policy).join('; ')).toMatch(reason);
    try {
      buildRunPod({ ...base, podTemplate });
      expect.unreachable('the template should be refused');
    } catch (error) {
      expect(isLorenzError(error) && error.code).toBe('invalid_pod_template');
      expect((error as Error).message).toMatch(reason);
    }
  });

  it('accepts safe security settings, volumes and mounts, and keeps them in the Pod', () => {
    const safe: V1PodTemplateSpec = {
      spec: {
        hostNetwork: false,
        automountServiceAccountToken: false,
        securityContext: { runAsUser: 1000, fsGroup: 2000 },
        volumes: [{ name: 'cache', emptyDir: {} }],
        containers: [
          {
            name: 'agent',
            image: 'x',
            securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
            volumeMounts: [{ name: 'cache', mountPath: '/cache' }],
          },
        ],
      },
    };
    expect(podTemplateProblems(safe)).toEqual([]);
    const pod = buildRunPod({ ...base, podTemplate: safe });
    expect(pod.spec?.securityContext).toMatchObject({ runAsUser: 1000, fsGroup: 2000 });
    expect(pod.spec?.volumes?.[0]).toEqual({ name: 'cache', emptyDir: {} });
    const agent = pod.spec?.containers[0];
    expect(agent?.volumeMounts?.[0]).toEqual({ name: 'cache', mountPath: '/cache' });
    expect(agent?.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      privileged: false,
    });
  });

  it('refuses a service account other than default when the operator allows none', () => {
    const named = {
      spec: { serviceAccountName: 'agents', containers: [{ name: 'agent', image: 'x' }] },
    };
    expect(podTemplateProblems(named).join('; ')).toMatch(
      /serviceAccountName: agents is not allowed for run Pods \(allowed: default;/,
    );
    expect(podTemplateProblems({ spec: { ...named.spec, serviceAccountName: 'default' } })).toEqual(
      [],
    );
  });

  it('keeps the restricted profiles a template may choose, and nothing weaker', () => {
    const chosen: V1PodTemplateSpec = {
      spec: {
        securityContext: {
          appArmorProfile: { type: 'Localhost', localhostProfile: 'agents' },
          seLinuxOptions: { level: 's0:c1,c2', type: 'container_t' },
          sysctls: [{ name: 'net.ipv4.ping_group_range', value: '0 1' }],
        },
        volumes: [
          { name: 'ca', projected: { sources: [{ configMap: { name: 'ca' } }] } },
          { name: 'creds', secret: { secretName: 'creds' } },
        ],
        containers: [
          {
            name: 'agent',
            image: 'x',
            securityContext: { appArmorProfile: { type: 'RuntimeDefault' } },
          },
        ],
      },
    };
    expect(podTemplateProblems(chosen)).toEqual([]);
    const pod = buildRunPod({ ...base, podTemplate: chosen });
    expect(pod.spec?.securityContext).toMatchObject({
      appArmorProfile: { type: 'Localhost', localhostProfile: 'agents' },
      seLinuxOptions: { level: 's0:c1,c2', type: 'container_t' },
      sysctls: [{ name: 'net.ipv4.ping_group_range', value: '0 1' }],
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.spec?.containers[0]?.securityContext?.appArmorProfile).toEqual({
      type: 'RuntimeDefault',
    });
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
  });

  it('gives the runner a copy of each Secret-sourced variable to redact, unless the Workflow opts out', () => {
    const secretRef = { name: 'keys' };
    const withSecrets: V1PodTemplateSpec = {
      spec: {
        containers: [
          {
            name: 'agent',
            image: 'x',
            env: [
              { name: 'PLAIN', value: 'v' },
              { name: 'API_KEY', valueFrom: { secretKeyRef: { name: 'api', key: 'token' } } },
            ],
            envFrom: [{ configMapRef: { name: 'cfg' } }, { secretRef }],
          },
        ],
      },
    };
    const agentOf = (redactSecrets?: boolean) =>
      buildRunPod({ ...base, podTemplate: withSecrets, redactSecrets }).spec!.containers[0]!;
    const redacting = agentOf();
    expect(redacting.env).toContainEqual({
      name: 'LORENZ_REDACT_1',
      valueFrom: { secretKeyRef: { name: 'api', key: 'token' } },
    });
    expect(redacting.env?.map((variable) => variable.name)).not.toContain('LORENZ_REDACT_0');
    expect(redacting.envFrom).toEqual([
      { configMapRef: { name: 'cfg' } },
      { secretRef },
      { prefix: 'LORENZ_REDACT_FROM1_', secretRef: { name: 'keys', optional: true } },
    ]);
    const plain = agentOf(false);
    expect(plain.env?.some((variable) => variable.name.startsWith('LORENZ_REDACT_'))).toBe(false);
    expect(plain.envFrom).toEqual([{ configMapRef: { name: 'cfg' } }, { secretRef }]);
  });
});

describe('run pod builder: the budget', () => {
  const budget = {
    limits: { run: { tokens: 100 }, warnRatio: 0.8, timeZone: 'UTC' },
    spentBefore: { run: { tokens: 5 }, issue: { tokens: 5 }, day: { tokens: 5 } },
    day: '2026-12-03',
  };
  const envOf = (pod: ReturnType<typeof buildRunPod>) =>
    pod.spec?.containers.find((container) => container.name === 'agent')?.env ?? [];

  it('goes to the runner as LORENZ_BUDGET, and a template cannot set its own', () => {
    const forged = {
      ...template,
      spec: {
        ...template.spec,
        containers: (template.spec?.containers ?? []).map((container) => ({
          ...container,
          env: [...(container.env ?? []), { name: 'LORENZ_BUDGET', value: '{"limits":{}}' }],
        })),
      },
    };
    const pod = buildRunPod({ ...base, podTemplate: forged, budget });
    const set = envOf(pod).filter((variable) => variable.name === 'LORENZ_BUDGET');
    expect(set).toHaveLength(1);
    expect(JSON.parse(set[0]?.value ?? '')).toEqual(budget);
    // Without a budget there is none, forged or not.
    const none = envOf(buildRunPod({ ...base, podTemplate: forged }));
    expect(none.some((variable) => variable.name === 'LORENZ_BUDGET')).toBe(false);
  });
});
