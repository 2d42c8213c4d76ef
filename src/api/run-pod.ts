import { createHash } from 'node:crypto';

/**
 * The run-Pod contract: what the controller puts into a run Pod and where, and what the
 * runner inside reads from where. Both sides import this one module (Tekton keeps its
 * in-Pod paths the same way), so the two can never disagree on a path, a file name or how
 * the inputs are digested.
 */

/** Containers the controller adds. A Workflow's podTemplate may not use these names. */
export const RUNNER_INIT_CONTAINER_NAME = 'install-runner';
export const AGENT_CONTAINER_NAME = 'agent';

/** Volumes the controller adds. A Workflow's podTemplate may not use these names. */
export const RUN_POD_VOLUME_NAMES = {
  runnerBin: 'lorenz-bin',
  inputs: 'lorenz-inputs',
  podinfo: 'lorenz-podinfo',
  workspace: 'workspace',
  /** The attempt's agent-tools token (a Secret), only when tools are on. */
  tools: 'lorenz-tools',
  /** The Workflow's git credentials Secret, only with workspace.git and spec.git. */
  gitCredentials: 'lorenz-git-credentials',
  /** The Workflow's SSH key and known_hosts Secret, only with worker.ssh_hosts. */
  ssh: 'lorenz-ssh',
} as const;
export const RESERVED_VOLUME_NAMES: readonly string[] = Object.values(RUN_POD_VOLUME_NAMES);

/** Mount points inside a run Pod. */
export const RUN_POD_PATHS = {
  /** emptyDir the init container copies the runner bundle into. */
  runnerBin: '/lorenz-bin',
  /** The rendered inputs (read-only) with their manifest. */
  inputs: '/lorenz/inputs',
  /** Downward-API files (the issue's tracker state). */
  podinfo: '/lorenz/podinfo',
  /** The one workspace volume: the lifecycle's root. */
  workspace: '/workspace',
  /** The agent-tools token Secret (read-only, agent container only). */
  tools: '/lorenz/tools',
  /** The git credentials Secret, a file per host (read-only, agent container only). */
  gitCredentials: '/lorenz/git-credentials',
  /** The SSH worker Secret: `ssh-privatekey` and `known_hosts` (read-only, agent container only). */
  ssh: '/lorenz/ssh',
  terminationLog: '/dev/termination-log',
} as const;
/** Files the init container copies into the runner volume. */
export const RUNNER_BUNDLE_FILE = 'lorenz.js';
export const SCRIPTED_AGENT_FILE = 'scripted-agent.mjs';
/**
 * The launcher (hack/launcher.sh), the agent container's command: it starts the runner from
 * the V8 startup snapshot beside it when the agent image's node is the one that built it,
 * else from RUNNER_BUNDLE_FILE, with RUNNER_NODE_FLAGS either way.
 */
export const RUNNER_LAUNCHER_FILE = 'lorenz';
/** The snapshot and its key (`<node version> <machine>`): copied when the image has them. */
export const RUNNER_SNAPSHOT_FILES = ['lorenz.snapshot.blob', 'lorenz.snapshot.key'] as const;

/** The flags of `lorenz runner`, the agent container's command. */
/**
 * Node's flags for the runner (and, in hack/bundle.mjs's shebang, for `lorenz`). A hook's
 * output is streamed, but every chunk passes through V8's young generation, which grows to
 * tens of MiB under a hook that prints fast: a 1 MiB semi-space keeps a hook printing 50 MB
 * at +3 MiB of peak RSS instead of +17 MiB, at no measurable cost to start-up
 * (`npm run bench:limits`).
 */
export const RUNNER_NODE_FLAGS = ['--max-semi-space-size=1'] as const;

export const RUNNER_FLAGS = {
  inputs: 'inputs',
  slot: 'slot',
  workspace: 'workspace',
  issueStateFile: 'issue-state-file',
  /** The downward-API file with the inputs digest recorded on the Pod; absent: not checked. */
  inputsDigestFile: 'inputs-digest-file',
  terminationLog: 'termination-log',
  /** A workspace claim outlives the Pod: no before_remove, no removal. */
  keepWorkspace: 'keep-workspace',
  noAgent: 'no-agent',
  /** The MCP gateway the agent is given in session/new; absent: no tools. */
  toolsUrl: 'tools-url',
  /** The file holding the bearer token for the gateway (never an environment variable). */
  toolsTokenFile: 'tools-token-file',
  /** The name the agent sees the gateway under. */
  toolsServerName: 'tools-server-name',
  /** The directory of per-host git credential files (the mounted Secret); absent: anonymous. */
  gitCredentials: 'git-credentials',
  /** The SSH worker's private key file (the mounted Secret); with worker.ssh_hosts. */
  sshKey: 'ssh-key',
  /** The known_hosts file the worker's host key is checked against. */
  knownHosts: 'known-hosts',
  /** The entry of worker.ssh_hosts this slot's attempt runs on (status.slots[].host). */
  sshHost: 'ssh-host',
  /**
   * The digest of the prepared tree a claim restored from a snapshot holds: checked, and the
   * tree made the workspace, before any hook (docs/snapshots.md). Absent: a clean start.
   */
  sourceDigest: 'source-digest',
  /**
   * A warm-up, not a run (src/api/warm-up.ts): prepare `.lorenz-source/` at the default
   * branch's head (clone, repository setup, after_create), digest it, and report the
   * WarmUpResult in the termination message. No issue, no agent, no other hook.
   */
  prepare: 'prepare',
  /**
   * With `--prepare`: the commit the Workflow's warm snapshot holds. When the default branch's
   * head is still that commit, the warm-up ends at once with `unchanged` and prepares nothing.
   */
  unlessCommit: 'unless-commit',
} as const;

/** The keys of the SSH worker Secret, hence its file names under the ssh mount. */
export const SSH_SECRET_KEYS = {
  /** The key of a `kubernetes.io/ssh-auth` Secret. */
  privateKey: 'ssh-privatekey',
  knownHosts: 'known_hosts',
} as const;
export const SSH_KEY_PATH = `${RUN_POD_PATHS.ssh}/${SSH_SECRET_KEYS.privateKey}`;
export const SSH_KNOWN_HOSTS_PATH = `${RUN_POD_PATHS.ssh}/${SSH_SECRET_KEYS.knownHosts}`;

/** The key of the token in the tools Secret, hence its file name under the tools mount. */
export const TOOLS_TOKEN_KEY = 'token';
export const TOOLS_TOKEN_PATH = `${RUN_POD_PATHS.tools}/${TOOLS_TOKEN_KEY}`;

/**
 * The MCP server name of the gateway: `lorenz_<tracker kind>`, with anything but letters,
 * digits and `_` turned into `_` (agents use the name in tool ids, which allow no more).
 */
export const toolsServerName = (trackerKind: string): string =>
  `lorenz_${trackerKind.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;

/**
 * The agent container gets each Secret-sourced variable of its template a second time under
 * this prefix. The runner takes those values as the text to redact from everything it
 * reports, and removes them from the environment of hooks and the agent.
 */
export const REDACT_ENV_PREFIX = 'LORENZ_REDACT_';

/** Paths a podTemplate may not mount anything at, inside or above. */
export const RESERVED_MOUNT_PATHS: readonly string[] = [
  RUN_POD_PATHS.runnerBin,
  RUN_POD_PATHS.inputs,
  RUN_POD_PATHS.podinfo,
  RUN_POD_PATHS.workspace,
  RUN_POD_PATHS.tools,
  RUN_POD_PATHS.gitCredentials,
  RUN_POD_PATHS.ssh,
];

/** The downward-API file, under the podinfo mount, that holds the issue's state. */
export const ISSUE_STATE_FILE = 'issue-state';
export const ISSUE_STATE_PATH = `${RUN_POD_PATHS.podinfo}/${ISSUE_STATE_FILE}`;

/**
 * The downward-API file, under the podinfo mount, that holds the digest of the inputs the
 * controller recorded on the Pod: the runner refuses inputs mounted under the same name that
 * are not those (another IssueRun's of the same name, left for the garbage collector).
 */
export const INPUTS_DIGEST_FILE = 'inputs-digest';
export const INPUTS_DIGEST_PATH = `${RUN_POD_PATHS.podinfo}/${INPUTS_DIGEST_FILE}`;

/** File names in the inputs volume (the keys of the inputs ConfigMap). */
export const INPUT_FILES = {
  manifest: 'manifest.json',
  workflow: 'workflow.md',
  issue: 'issue.json',
  hooks: 'hooks.json',
  run: 'run.json',
} as const;
export const promptInputFile = (slot: number): string => `prompt-${slot}.md`;

/** run.json: what the runner needs besides the files. */
export interface RunDescriptor {
  run: string;
  identifier: string;
  attempt: number | null;
  ensembleSize: number;
  /**
   * workspace.git's branch, as the IssueRun's status keeps it (absent without workspace.git):
   * the runner passes it to the engine instead of rendering the branch template again.
   */
  branch?: string;
}

export const INPUT_MANIFEST_VERSION = 1;

/** manifest.json: every other input file with the digest of its exact text. */
export interface InputManifest {
  version: typeof INPUT_MANIFEST_VERSION;
  /** File name → `sha256:<hex>`. */
  files: Record<string, string>;
}

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** How an input file is named in the manifest: `sha256:<hex>` of its exact text. */
export const inputDigest = (text: string): string => `sha256:${sha256Hex(text)}`;

/** The manifest of a set of input files, in name order. */
export function inputManifest(files: Readonly<Record<string, string>>): InputManifest {
  const manifest: InputManifest = { version: INPUT_MANIFEST_VERSION, files: {} };
  for (const name of Object.keys(files).sort())
    manifest.files[name] = inputDigest(files[name] ?? '');
  return manifest;
}

/** manifest.json's exact text: what is written, digested, and verified. */
export const inputManifestText = (manifest: InputManifest): string =>
  `${JSON.stringify(manifest, null, 2)}\n`;
