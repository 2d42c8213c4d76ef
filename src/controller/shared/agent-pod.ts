import type {
  V1OwnerReference,
  V1Container,
  V1EnvVar,
  V1Pod,
  V1PodTemplateSpec,
  V1Volume,
} from '@kubernetes/client-node';
import { LorenzError } from '../../workflow/errors.js';
import {
  AGENT_CONTAINER_NAME,
  INPUTS_DIGEST_FILE,
  ISSUE_STATE_FILE,
  RUNNER_FLAGS,
  RUNNER_LAUNCHER_FILE,
  RUNNER_INIT_CONTAINER_NAME as INIT_CONTAINER_NAME,
  RUN_POD_PATHS,
  RUN_POD_VOLUME_NAMES,
  SSH_KEY_PATH,
  SSH_KNOWN_HOSTS_PATH,
  TOOLS_TOKEN_PATH,
  INPUTS_DIGEST_PATH,
  ISSUE_STATE_PATH,
} from '../../api/run-pod.js';
import {
  ANNOTATION_INPUTS_DIGEST,
  ANNOTATION_ISSUE_STATE,
  OPERATOR_IMAGE_BUNDLE_PATH,
  OPERATOR_IMAGE_LAUNCHER_PATH,
  OPERATOR_IMAGE_SCRIPTED_AGENT_PATH,
  OPERATOR_IMAGE_SNAPSHOT_PATHS,
} from './constants.js';
import { podTemplateProblems, type PodTemplatePolicy } from './pod-template-check.js';
import { agentEnv, agentEnvFrom } from './agent-env.js';
import { RUN_BUDGET_ENV, type RunBudget } from '../../workflow/budget.js';
import { restrictedContainer, restrictedPod } from './pod-security-context.js';

/**
 * The Pod every agent-running Pod of the controller is: the runner's init container, the
 * agent container of the Workflow's template with the controller's volumes and restricted
 * security, and the runner's common flags. Who the Pod is (name, labels, owner, claim) and
 * its mode (the flags after the common ones) come from its caller: a run Pod
 * (issuerun/pod-builder.ts) or a warm-up Pod (warm/children.ts).
 */

const {
  runnerBin: RUNNER_BIN_DIR,
  inputs: INPUTS_DIR,
  podinfo: PODINFO_DIR,
  workspace: WORKSPACE_DIR,
  tools: TOOLS_DIR,
  gitCredentials: GIT_CREDENTIALS_DIR,
  ssh: SSH_DIR,
  terminationLog: TERMINATION_LOG_PATH,
} = RUN_POD_PATHS;
const {
  runnerBin: VOLUME_RUNNER_BIN,
  inputs: VOLUME_INPUTS,
  podinfo: VOLUME_PODINFO,
  workspace: VOLUME_WORKSPACE,
  tools: VOLUME_TOOLS,
  gitCredentials: VOLUME_GIT_CREDENTIALS,
  ssh: VOLUME_SSH,
} = RUN_POD_VOLUME_NAMES;

/** What every agent Pod is made from, whatever it runs for. */
export interface AgentPodOptions {
  podTemplate: V1PodTemplateSpec | undefined;
  /** The claim is restored from a snapshot whose prepared tree has this digest. */
  sourceDigest?: string | undefined;
  /** The Lorenz image whose init container copies the runner in. */
  operatorImage: string;
  inputsConfigMap: string;
  hooksTimeoutMs: number;
  activeDeadlineSeconds: number;
  /** Copy Secret-sourced variables for the runner to redact (the Workflow's redactSecretOutput). */
  redactSecrets?: boolean | undefined;
  /** What the operator allows beyond the restricted profile (service accounts). */
  policy?: PodTemplatePolicy | undefined;
  /** The agent tools of this attempt; absent when the controller or the Workflow turns them off. */
  tools?: RunPodTools | undefined;
  /** The Secret of git credentials (spec.git.credentialsSecretRef), when workspace.git is on. */
  gitCredentialsSecret?: string | undefined;
  /** The SSH worker of this slot's attempt, when the Workflow has worker.ssh_hosts. */
  ssh?: RunPodSsh | undefined;
  /** The attempt's budget (shared/run-budget.ts), in RUN_BUDGET_ENV; absent: no limits, no prices. */
  budget?: RunBudget | undefined;
}

export interface RunPodSsh {
  /** The Secret of spec.worker.sshKeySecretRef (ssh-privatekey, known_hosts). */
  secretName: string;
  /** The worker.ssh_hosts entry the controller chose (status.slots[].host). */
  host: string;
}

export interface RunPodTools {
  /** The gateway's URL as run Pods reach it. */
  url: string;
  /** What the agent calls the gateway (`lorenz_<tracker kind>`). */
  serverName: string;
  /** The attempt's token Secret. */
  secretName: string;
}
/**
 * The init container's copy: the bundle, the launcher and the scripted agent always; the
 * startup snapshot and its key when the operator image has them (an image built without one
 * still runs, from the bundle). Paths are constants, never user input.
 */
const INSTALL_RUNNER_SCRIPT = [
  'set -e',
  `cp ${[OPERATOR_IMAGE_BUNDLE_PATH, OPERATOR_IMAGE_LAUNCHER_PATH, OPERATOR_IMAGE_SCRIPTED_AGENT_PATH].join(' ')} ${RUNNER_BIN_DIR}/`,
  `for file in ${OPERATOR_IMAGE_SNAPSHOT_PATHS.join(' ')}; do`,
  `  if [ -e "$file" ]; then cp "$file" ${RUNNER_BIN_DIR}/; fi`,
  'done',
].join('\n');

/** The runner's tools flags: where the gateway is and where its token is. */
export const toolsArgs = (tools: RunPodTools | undefined): string[] =>
  tools
    ? [
        `--${RUNNER_FLAGS.toolsUrl}`,
        tools.url,
        `--${RUNNER_FLAGS.toolsTokenFile}`,
        TOOLS_TOKEN_PATH,
        `--${RUNNER_FLAGS.toolsServerName}`,
        tools.serverName,
      ]
    : [];

/**
 * The token as a file, not a variable: whatever the agent runs inherits its environment,
 * while the runner reads the file once and hands the token over in session/new only.
 * 0440: the files are root's, their group the Pod's fsGroup (always set, see restrictedPod),
 * which the runner's uid belongs to.
 */
const toolsVolume = (tools: RunPodTools | undefined): V1Volume[] =>
  tools
    ? [{ name: VOLUME_TOOLS, secret: { secretName: tools.secretName, defaultMode: 0o440 } }]
    : [];

/**
 * The git credentials as files too, for the same reason as the tools token: a variable
 * reaches every process of the Pod, while the engine's credential helper reads the file of
 * the one host git asks about. 0440 as for the token: a kubelet adds the group's read bit
 * to a read-only Secret volume of a Pod with an fsGroup anyway (0400 would read as 0440),
 * and the runner's uid reads it through that group.
 */
const gitCredentialsVolume = (secretName: string | undefined): V1Volume[] =>
  secretName ? [{ name: VOLUME_GIT_CREDENTIALS, secret: { secretName, defaultMode: 0o440 } }] : [];

export const gitCredentialsArgs = (secretName: string | undefined): string[] =>
  secretName ? [`--${RUNNER_FLAGS.gitCredentials}`, GIT_CREDENTIALS_DIR] : [];

/**
 * The SSH key as files as well, mounted as the git credentials are (0440, see above): the
 * runner reads the key and known_hosts once and keeps them in its own process; a hook or the
 * agent runs on the worker and never sees either.
 */
const sshVolume = (ssh: RunPodSsh | undefined): V1Volume[] =>
  ssh ? [{ name: VOLUME_SSH, secret: { secretName: ssh.secretName, defaultMode: 0o440 } }] : [];

export const sshArgs = (ssh: RunPodSsh | undefined): string[] =>
  ssh
    ? [
        `--${RUNNER_FLAGS.sshKey}`,
        SSH_KEY_PATH,
        `--${RUNNER_FLAGS.knownHosts}`,
        SSH_KNOWN_HOSTS_PATH,
        `--${RUNNER_FLAGS.sshHost}`,
        ssh.host,
      ]
    : [];

/**
 * Seconds the kubelet waits between SIGTERM and SIGKILL on deletion: enough for the runner
 * to stop the agent and still run after_run and before_remove, each bounded by the hook
 * timeout and the executor's 5 s kill grace.
 */
export function terminationGraceSeconds(hooksTimeoutMs: number): number {
  return 2 * Math.ceil(hooksTimeoutMs / 1000) + 15;
}

function workspaceVolume(claimName: string | undefined): V1Volume {
  if (claimName !== undefined) {
    return { name: VOLUME_WORKSPACE, persistentVolumeClaim: { claimName } };
  }
  return { name: VOLUME_WORKSPACE, emptyDir: {} };
}

/**
 * Who a Pod is: its name, the controller's labels, its owner, its claim and what the runner
 * is told beyond the common flags. A run Pod's (buildRunPod) and a warm-up Pod's
 * (buildWarmUpPod) differ only in these.
 */
export interface PodShape {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  owner: V1OwnerReference;
  /** The workspace claim; absent: an emptyDir. */
  claimName: string | undefined;
  /**
   * A run's ensemble slot: the runner is told it and where the issue's state is. Absent for a
   * warm-up, which has neither (`runner --prepare` refuses the flags of a run).
   */
  slot: number | undefined;
  /** Flags after the common ones (mode, tools, credentials, SSH). */
  runnerArgs: string[];
}

/** The budget is the controller's to set: a variable of that name in the template is dropped. */
function withBudget(env: V1EnvVar[], budget: RunBudget | undefined): V1EnvVar[] {
  const kept = env.filter((variable) => variable.name !== RUN_BUDGET_ENV);
  return budget ? [...kept, { name: RUN_BUDGET_ENV, value: JSON.stringify(budget) }] : kept;
}

// eslint-disable-next-line max-lines-per-function -- the Pod spec as one object literal, read as the manifest it renders
export function agentPod(options: AgentPodOptions, shape: PodShape): V1Pod {
  const problems = podTemplateProblems(options.podTemplate, options.policy);
  if (problems.length > 0) {
    throw new LorenzError('invalid_pod_template', problems.join('; '), { problems });
  }
  const templateSpec = options.podTemplate?.spec;
  const agentTemplate = (templateSpec?.containers ?? []).find(
    (container) => container.name === AGENT_CONTAINER_NAME,
  ) as V1Container;
  const podSecurity = templateSpec?.securityContext;
  const runAsUser = agentTemplate.securityContext?.runAsUser ?? podSecurity?.runAsUser;
  const labels: Record<string, string> = {
    ...options.podTemplate?.metadata?.labels,
    ...shape.labels,
  };
  const annotations: Record<string, string> = {
    ...options.podTemplate?.metadata?.annotations,
    ...shape.annotations,
  };
  const installRunner: V1Container = {
    name: INIT_CONTAINER_NAME,
    image: options.operatorImage,
    // The scripted agent too, so `node /lorenz-bin/scripted-agent.mjs` works in any image.
    // The startup snapshot when the image has one: without it the launcher runs the bundle.
    command: ['sh', '-c', INSTALL_RUNNER_SCRIPT],
    volumeMounts: [{ name: VOLUME_RUNNER_BIN, mountPath: RUNNER_BIN_DIR }],
    securityContext: restrictedContainer(undefined),
    terminationMessagePolicy: 'File',
  };
  const agent: V1Container = {
    name: AGENT_CONTAINER_NAME,
    image: agentTemplate.image,
    imagePullPolicy: agentTemplate.imagePullPolicy,
    // The launcher is a POSIX sh script: sh is in every agent image already (hooks run
    // under it), and `exec` leaves node as the container's main process.
    command: [
      'sh',
      `${RUNNER_BIN_DIR}/${RUNNER_LAUNCHER_FILE}`,
      'runner',
      `--${RUNNER_FLAGS.inputs}`,
      INPUTS_DIR,
      ...(shape.slot === undefined ? [] : [`--${RUNNER_FLAGS.slot}`, String(shape.slot)]),
      `--${RUNNER_FLAGS.workspace}`,
      WORKSPACE_DIR,
      ...(shape.slot === undefined ? [] : [`--${RUNNER_FLAGS.issueStateFile}`, ISSUE_STATE_PATH]),
      `--${RUNNER_FLAGS.inputsDigestFile}`,
      INPUTS_DIGEST_PATH,
      ...shape.runnerArgs,
    ],
    workingDir: WORKSPACE_DIR,
    env: withBudget(agentEnv(agentTemplate, options.redactSecrets ?? true), options.budget),
    envFrom: agentEnvFrom(agentTemplate, options.redactSecrets ?? true),
    resources: agentTemplate.resources,
    volumeMounts: [
      ...(agentTemplate.volumeMounts ?? []),
      { name: VOLUME_RUNNER_BIN, mountPath: RUNNER_BIN_DIR, readOnly: true },
      { name: VOLUME_INPUTS, mountPath: INPUTS_DIR, readOnly: true },
      { name: VOLUME_PODINFO, mountPath: PODINFO_DIR, readOnly: true },
      { name: VOLUME_WORKSPACE, mountPath: WORKSPACE_DIR },
      ...(options.tools ? [{ name: VOLUME_TOOLS, mountPath: TOOLS_DIR, readOnly: true }] : []),
      ...(options.gitCredentialsSecret
        ? [{ name: VOLUME_GIT_CREDENTIALS, mountPath: GIT_CREDENTIALS_DIR, readOnly: true }]
        : []),
      ...(options.ssh ? [{ name: VOLUME_SSH, mountPath: SSH_DIR, readOnly: true }] : []),
    ],
    securityContext: restrictedContainer(agentTemplate.securityContext),
    terminationMessagePath: TERMINATION_LOG_PATH,
    terminationMessagePolicy: 'File',
  };
  const volumes: V1Volume[] = [
    ...(templateSpec?.volumes ?? []),
    { name: VOLUME_RUNNER_BIN, emptyDir: {} },
    { name: VOLUME_INPUTS, configMap: { name: options.inputsConfigMap, defaultMode: 0o444 } },
    {
      name: VOLUME_PODINFO,
      downwardAPI: {
        items: [
          {
            path: ISSUE_STATE_FILE,
            fieldRef: { fieldPath: `metadata.annotations['${ANNOTATION_ISSUE_STATE}']` },
          },
          {
            path: INPUTS_DIGEST_FILE,
            fieldRef: { fieldPath: `metadata.annotations['${ANNOTATION_INPUTS_DIGEST}']` },
          },
        ],
      },
    },
    workspaceVolume(shape.claimName),
    ...toolsVolume(options.tools),
    ...gitCredentialsVolume(options.gitCredentialsSecret),
    ...sshVolume(options.ssh),
  ];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: shape.name,
      namespace: shape.namespace,
      labels,
      annotations,
      ownerReferences: [shape.owner],
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      activeDeadlineSeconds: options.activeDeadlineSeconds,
      terminationGracePeriodSeconds: Math.max(
        templateSpec?.terminationGracePeriodSeconds ?? 0,
        terminationGraceSeconds(options.hooksTimeoutMs),
      ),
      serviceAccountName: templateSpec?.serviceAccountName,
      nodeSelector: templateSpec?.nodeSelector,
      tolerations: templateSpec?.tolerations,
      affinity: templateSpec?.affinity,
      runtimeClassName: templateSpec?.runtimeClassName,
      priorityClassName: templateSpec?.priorityClassName,
      imagePullSecrets: templateSpec?.imagePullSecrets,
      securityContext: restrictedPod(podSecurity, runAsUser, options.sourceDigest !== undefined),
      initContainers: [installRunner],
      containers: [agent],
      volumes,
    },
  };
}
