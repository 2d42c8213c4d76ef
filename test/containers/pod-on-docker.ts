// Runs one container of a run Pod, as the pod builder made it, on the Docker engine: the
// Pod's and the container's securityContext become the engine's own flags, so what the
// kernel enforces is what the Pod asks for (the process node enforces none of it). Volumes
// are host directories the test prepares, named as in the Pod.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import {
  INPUTS_DIGEST_FILE,
  ISSUE_STATE_FILE,
  RUN_POD_VOLUME_NAMES,
} from '../../src/api/run-pod.js';
import { renderRunInputs, type RunInputs } from '../../src/controller/issuerun/inputs.js';
import { buildRunPod } from '../../src/controller/issuerun/pod-builder.js';
import { loadWorkflowText } from '../../src/template/load-workflow.js';
import { normalizeIssue } from '../../src/workflow/issue.js';

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

export interface RunPodCase {
  /** The WORKFLOW.md and the name of its Workflow. */
  workflow: string;
  workflowName: string;
  /** The run (also the uid's and the inputs ConfigMap's stem) and its Todo issue. */
  run: string;
  identifier: string;
  title: string;
  /** workspace.git's branch, as the IssueRun's status keeps it. */
  branch?: string;
  agentImage: string;
  operatorImage: string;
}

/** The inputs and the run Pod the controller makes for the first attempt of a Todo issue. */
export async function renderRunPod(run: RunPodCase): Promise<{ pod: V1Pod; inputs: RunInputs }> {
  const loaded = loadWorkflowText(run.workflow, run.workflowName);
  const issue = normalizeIssue({ identifier: run.identifier, title: run.title, state: 'Todo' });
  const inputs = await renderRunInputs({
    workflowText: run.workflow,
    config: loaded.config,
    promptTemplate: loaded.promptTemplate,
    issue,
    run: {
      run: run.run,
      identifier: run.identifier,
      attempt: null,
      ensembleSize: 1,
      ...(run.branch ? { branch: run.branch } : {}),
    },
  });
  const pod = buildRunPod({
    run: { name: run.run, namespace: 'default', uid: `uid-${run.run}` },
    workflowName: run.workflowName,
    podTemplate: { spec: { containers: [{ name: 'agent', image: run.agentImage }] } },
    slot: 0,
    attempt: 1,
    operatorImage: run.operatorImage,
    inputsConfigMap: `${run.run}-inputs`,
    inputsDigest: inputs.digest,
    issueState: 'Todo',
    hooksTimeoutMs: 60_000,
    activeDeadlineSeconds: 600,
  });
  return { pod, inputs };
}

/**
 * The run Pod's volumes as the kubelet lays them out, in directories under `scratch`: the
 * emptyDirs world-writable, the inputs ConfigMap's files read-only, and the downward API's
 * issue state and inputs digest (projected from the Pod's lorenz.dev/inputs-digest).
 */
export function kubeletVolumes(scratch: string, inputs: RunInputs): Record<string, string> {
  const dir = (name: string, mode: number) => {
    const path = join(scratch, name);
    mkdirSync(path, { recursive: true });
    chmodSync(path, mode);
    return path;
  };
  const inputsDir = dir('inputs', 0o755);
  for (const [name, content] of Object.entries(inputs.files))
    writeFileSync(join(inputsDir, name), content, { mode: 0o444 });
  const podinfo = dir('podinfo', 0o755);
  writeFileSync(join(podinfo, ISSUE_STATE_FILE), 'Todo', { mode: 0o444 });
  writeFileSync(join(podinfo, INPUTS_DIGEST_FILE), inputs.digest, { mode: 0o444 });
  return {
    [RUN_POD_VOLUME_NAMES.runnerBin]: dir('lorenz-bin', 0o777),
    [RUN_POD_VOLUME_NAMES.workspace]: dir('workspace', 0o777),
    [RUN_POD_VOLUME_NAMES.inputs]: inputsDir,
    [RUN_POD_VOLUME_NAMES.podinfo]: podinfo,
  };
}
