import { parseArgs } from 'node:util';
import { ISSUE_STATE_PATH, RUNNER_FLAGS, RUN_POD_PATHS } from '../api/run-pod.js';
import { TREE_DIGEST_PATTERN } from '../api/workspace-source.js';
import type { RunnerSsh } from './ssh.js';
import type { RunnerTools } from './tools.js';

/**
 * `lorenz runner`'s flags: a run (one ensemble slot of an IssueRun) by default, a warm-up
 * with `--prepare` (src/api/warm-up.ts). The controller writes them; a mistake in them is a
 * usage error (exit 2), before anything is read.
 */

/** A run's flags, as parsed. */
export interface RunnerArgs {
  inputsDir: string;
  slot: number;
  /** The workspace volume: the lifecycle's root, unless it runs on an SSH worker. */
  workspaceRoot: string;
  issueStateFile: string;
  /** The digest the inputs must have (a downward-API file); absent: the manifest alone. */
  inputsDigestFile?: string | undefined;
  terminationLogPath: string;
  /** With a persistent claim the tree outlives the Pod: no before_remove, no removal. */
  keepWorkspace: boolean;
  /** Run the hooks only (no agent step). */
  noAgent: boolean;
  /** The digest of the snapshot's prepared tree the claim was restored from; absent: clean. */
  sourceDigest?: string | undefined;
  /** The agent-tools gateway to offer the agent; absent: no tools. */
  tools?: RunnerTools | undefined;
  /** The directory of per-host git credential files (the mounted Secret); absent: anonymous. */
  gitCredentials?: string | undefined;
  /** The SSH worker of this slot (the mounted key Secret and the chosen host); with worker.ssh_hosts. */
  ssh?: RunnerSsh | undefined;
}

/** A warm-up's flags (`--prepare`), as parsed. */
export interface PrepareArgs {
  inputsDir: string;
  inputsDigestFile?: string | undefined;
  /** The warm-up claim's mount: the prepared tree goes to `<root>/.lorenz-source`. */
  workspaceRoot: string;
  terminationLogPath: string;
  /** The commit the Workflow's snapshot holds, lower-case; absent: always prepare. */
  unlessCommit?: string | undefined;
  gitCredentials?: string | undefined;
}

export type RunnerInvocation =
  { mode: 'run'; args: RunnerArgs } | { mode: 'prepare'; args: PrepareArgs };

/** Where the controller puts everything (the run-Pod contract), so the flags are optional. */
export const RUNNER_DEFAULTS = {
  inputsDir: RUN_POD_PATHS.inputs,
  workspaceRoot: RUN_POD_PATHS.workspace,
  issueStateFile: ISSUE_STATE_PATH,
  terminationLogPath: RUN_POD_PATHS.terminationLog,
} as const;

/** The flags `lorenz runner` parses (their help: cli/command-help.ts). */
export const RUNNER_OPTIONS = {
  [RUNNER_FLAGS.inputs]: { type: 'string', default: RUNNER_DEFAULTS.inputsDir },
  [RUNNER_FLAGS.slot]: { type: 'string', default: '0' },
  [RUNNER_FLAGS.workspace]: { type: 'string', default: RUNNER_DEFAULTS.workspaceRoot },
  [RUNNER_FLAGS.issueStateFile]: { type: 'string', default: RUNNER_DEFAULTS.issueStateFile },
  [RUNNER_FLAGS.inputsDigestFile]: { type: 'string' },
  [RUNNER_FLAGS.terminationLog]: {
    type: 'string',
    default: RUNNER_DEFAULTS.terminationLogPath,
  },
  [RUNNER_FLAGS.keepWorkspace]: { type: 'boolean', default: false },
  [RUNNER_FLAGS.noAgent]: { type: 'boolean', default: false },
  [RUNNER_FLAGS.toolsUrl]: { type: 'string' },
  [RUNNER_FLAGS.toolsTokenFile]: { type: 'string' },
  [RUNNER_FLAGS.toolsServerName]: { type: 'string', default: 'lorenz' },
  [RUNNER_FLAGS.gitCredentials]: { type: 'string' },
  [RUNNER_FLAGS.sshKey]: { type: 'string' },
  [RUNNER_FLAGS.knownHosts]: { type: 'string' },
  [RUNNER_FLAGS.sshHost]: { type: 'string' },
  [RUNNER_FLAGS.sourceDigest]: { type: 'string' },
  [RUNNER_FLAGS.prepare]: { type: 'boolean', default: false },
  [RUNNER_FLAGS.unlessCommit]: { type: 'string' },
} as const;

/**
 * The flags a warm-up takes. Any other given with `--prepare` is refused rather than ignored:
 * a warm-up has no issue, slot, agent or source, so such a flag is the controller's mistake.
 */
export const PREPARE_FLAGS: readonly string[] = [
  RUNNER_FLAGS.prepare,
  RUNNER_FLAGS.unlessCommit,
  RUNNER_FLAGS.inputs,
  RUNNER_FLAGS.inputsDigestFile,
  RUNNER_FLAGS.workspace,
  RUNNER_FLAGS.gitCredentials,
  RUNNER_FLAGS.terminationLog,
];

/** A commit id as git prints it: 40 hex digits (SHA-1) or 64 (SHA-256). */
const COMMIT_ID = /^([0-9a-f]{40}|[0-9a-f]{64})$/i;

type Values = ReturnType<typeof parseValues>['values'];

function parseValues(argv: string[]) {
  return parseArgs({
    args: argv,
    options: RUNNER_OPTIONS,
    strict: true,
    allowPositionals: false,
    tokens: true,
  });
}

/** What `lorenz runner ARGV` is asked to do; throws a usage error's message. */
export function parseRunnerInvocation(argv: string[]): RunnerInvocation {
  const { values, tokens } = parseValues(argv);
  const given = new Set(tokens.flatMap((token) => (token.kind === 'option' ? [token.name] : [])));
  if (!values[RUNNER_FLAGS.prepare]) {
    if (given.has(RUNNER_FLAGS.unlessCommit)) {
      throw new Error(
        `--${RUNNER_FLAGS.unlessCommit} is a warm-up's flag: it goes with --${RUNNER_FLAGS.prepare}`,
      );
    }
    return { mode: 'run', args: runArgs(values) };
  }
  const foreign = [...given].filter((name) => !PREPARE_FLAGS.includes(name));
  if (foreign.length > 0) {
    throw new Error(
      `${foreign.map((name) => `--${name}`).join(', ')}: not a warm-up's flag (--${RUNNER_FLAGS.prepare} takes ${PREPARE_FLAGS.filter(
        (name) => name !== RUNNER_FLAGS.prepare,
      )
        .map((name) => `--${name}`)
        .join(', ')})`,
    );
  }
  return { mode: 'prepare', args: prepareArgs(values) };
}

/** A run's flags; throws a usage error's message (a warm-up's flags included). */
export function parseRunnerArgs(argv: string[]): RunnerArgs {
  const invocation = parseRunnerInvocation(argv);
  if (invocation.mode !== 'run') throw new Error(`--${RUNNER_FLAGS.prepare}: not a run`);
  return invocation.args;
}

function prepareArgs(values: Values): PrepareArgs {
  const unlessCommit = values[RUNNER_FLAGS.unlessCommit];
  if (unlessCommit !== undefined && !COMMIT_ID.test(unlessCommit)) {
    throw new Error(
      `--${RUNNER_FLAGS.unlessCommit}: not a commit id (40 or 64 hex digits): ${unlessCommit}`,
    );
  }
  return {
    inputsDir: values[RUNNER_FLAGS.inputs],
    workspaceRoot: values[RUNNER_FLAGS.workspace],
    terminationLogPath: values[RUNNER_FLAGS.terminationLog],
    ...optional('inputsDigestFile', values[RUNNER_FLAGS.inputsDigestFile]),
    ...optional('gitCredentials', values[RUNNER_FLAGS.gitCredentials]),
    ...optional('unlessCommit', unlessCommit?.toLowerCase()),
  };
}

const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;

function runArgs(values: Values): RunnerArgs {
  const slotText = values[RUNNER_FLAGS.slot];
  const slot = Number(slotText);
  if (!Number.isInteger(slot) || slot < 0)
    throw new Error(`--${RUNNER_FLAGS.slot}: not a slot number: ${slotText}`);
  const toolsUrl = values[RUNNER_FLAGS.toolsUrl];
  const tokenFile = values[RUNNER_FLAGS.toolsTokenFile];
  if ((toolsUrl === undefined) !== (tokenFile === undefined)) {
    throw new Error(
      `--${RUNNER_FLAGS.toolsUrl} and --${RUNNER_FLAGS.toolsTokenFile} go together: give both or neither`,
    );
  }
  const sourceDigest = values[RUNNER_FLAGS.sourceDigest];
  if (sourceDigest !== undefined && !new RegExp(TREE_DIGEST_PATTERN).test(sourceDigest)) {
    throw new Error(
      `--${RUNNER_FLAGS.sourceDigest}: not a sha256:<64 hex> digest: ${sourceDigest}`,
    );
  }
  const ssh: RunnerSsh = {
    keyFile: values[RUNNER_FLAGS.sshKey],
    knownHostsFile: values[RUNNER_FLAGS.knownHosts],
    host: values[RUNNER_FLAGS.sshHost],
  };
  return {
    inputsDir: values[RUNNER_FLAGS.inputs],
    slot,
    workspaceRoot: values[RUNNER_FLAGS.workspace],
    issueStateFile: values[RUNNER_FLAGS.issueStateFile],
    inputsDigestFile: values[RUNNER_FLAGS.inputsDigestFile],
    terminationLogPath: values[RUNNER_FLAGS.terminationLog],
    keepWorkspace: values[RUNNER_FLAGS.keepWorkspace],
    noAgent: values[RUNNER_FLAGS.noAgent],
    ...optional('sourceDigest', sourceDigest),
    ...optional('gitCredentials', values[RUNNER_FLAGS.gitCredentials]),
    ...(Object.values(ssh).some((value) => value !== undefined) ? { ssh } : {}),
    ...(toolsUrl !== undefined && tokenFile !== undefined
      ? {
          tools: {
            url: toolsUrl,
            tokenFile,
            serverName: values[RUNNER_FLAGS.toolsServerName],
          },
        }
      : {}),
  };
}
