// What `lorenz COMMAND --help` prints, and what shell completion offers: one entry per
// command of COMMANDS (commands.ts). Plain data, loaded without any command: the flags each
// command's parser accepts, with their short forms and defaults, are kept equal to these by
// test/unit/cli/command-help.test.ts.
import { ISSUE_STATE_PATH, RUN_POD_PATHS } from '../api/run-pod.js';

/** One flag: without `value` it is a switch; `default` is the parser's own default. */
export interface FlagHelp {
  name: string;
  short?: string;
  /** The value's placeholder (FILE, N, …); absent for a boolean flag. */
  value?: string;
  default?: string;
  text: string;
}

export interface CommandHelp {
  /** The synopsis after `lorenz `. */
  usage: string;
  summary: string;
  flags: readonly FlagHelp[];
  example: string;
}

const KUBE_FLAGS: readonly FlagHelp[] = [
  {
    name: 'kubeconfig',
    value: 'FILE',
    text: 'the kubeconfig (when unset: $KUBECONFIG, ~/.kube/config)',
  },
  {
    name: 'archive-dsn',
    value: 'DSN',
    text: 'read the run archive from this store (sqlite:PATH or postgres://…)',
  },
  {
    name: 'archive-url',
    value: 'URL',
    text: "read the run archive from the controller's read API",
  },
];
/** The servers' --kubeconfig: they run in a cluster too, where its service account is the default. */
const IN_CLUSTER_KUBECONFIG: FlagHelp = {
  name: 'kubeconfig',
  value: 'FILE',
  text: 'the kubeconfig (when unset: in-cluster or ~/.kube/config)',
};
const NAMESPACE: FlagHelp = {
  name: 'namespace',
  short: 'n',
  value: 'NS',
  text: "the namespace (when unset: the kubeconfig context's)",
};
const SSH_FLAGS: readonly FlagHelp[] = [
  {
    name: 'ssh-key',
    value: 'FILE',
    text: 'the private key for worker.ssh_hosts (when unset: ~/.ssh/id_ed25519)',
  },
  {
    name: 'known-hosts',
    value: 'FILE',
    text: 'the host keys for worker.ssh_hosts (when unset: ~/.ssh/known_hosts)',
  },
];
const WORKFLOW: FlagHelp = { name: 'workflow', value: 'FILE', text: 'the WORKFLOW.md' };
const ISSUE: FlagHelp = {
  name: 'issue',
  value: 'FILE',
  text: 'a YAML or JSON file holding one issue (see lorenz --help)',
};
const NO_AGENT: FlagHelp = { name: 'no-agent', text: 'run the hooks but not the agent' };

export const COMMAND_HELP: Readonly<Record<string, CommandHelp>> = {
  'workflow validate': {
    usage: 'workflow validate FILE|- [--allowed-service-accounts NAME,…]',
    summary:
      'Checks a WORKFLOW.md, or Workflow and IssueRun manifests, as the cluster would; one line per problem on stderr, exit 2 when anything is refused.',
    flags: [
      {
        name: 'allowed-service-accounts',
        value: 'NAME,…',
        text: 'the service accounts a pod template may name (as the controller is told)',
      },
    ],
    example: 'kustomize build config/samples | lorenz workflow validate -',
  },
  'prompt render': {
    usage: 'prompt render --workflow FILE --issue FILE [--attempt N] [--slot I --size N]',
    summary: 'Prints the prompt the agent would get for the issue.',
    flags: [
      WORKFLOW,
      ISSUE,
      { name: 'attempt', value: 'N', text: 'the attempt number (when unset: the first)' },
      { name: 'slot', value: 'I', text: 'the ensemble slot (with --size)' },
      { name: 'size', value: 'N', text: 'the ensemble size (with --slot)' },
    ],
    example: 'lorenz prompt render --workflow WORKFLOW.md --issue issue.yaml',
  },
  'hook render': {
    usage: 'hook render --workflow FILE --hook NAME --issue FILE',
    summary: 'Prints a hook script as it would run for the issue.',
    flags: [
      WORKFLOW,
      { name: 'hook', value: 'NAME', text: 'after_create, before_run, after_run or before_remove' },
      ISSUE,
    ],
    example: 'lorenz hook render --workflow WORKFLOW.md --hook before_run --issue issue.yaml',
  },
  'workspace digest': {
    usage: 'workspace digest DIR [--json]',
    summary:
      'Prints the tree digest of a prepared workspace, the digest a snapshot source names (its .lorenz-source/), as the runner checks it.',
    flags: [{ name: 'json', text: 'print what was read too (files, bytes, links, dirs)' }],
    example: 'lorenz workspace digest /mnt/prepared/.lorenz-source',
  },
  run: {
    usage: 'run --workflow FILE --issue FILE [--no-agent] [--attempt N] [FLAGS]',
    summary: 'Runs one issue on this machine: the hooks and the agent, in a fresh workspace.',
    flags: [
      WORKFLOW,
      ISSUE,
      NO_AGENT,
      { name: 'attempt', value: 'N', text: 'the attempt number (when unset: the first)' },
      {
        name: 'git-credentials',
        value: 'DIR|FILE',
        text: 'per-host git credentials for workspace.git (or $LORENZ_GIT_CREDENTIALS)',
      },
      ...SSH_FLAGS,
    ],
    example: 'lorenz run --workflow WORKFLOW.md --issue issue.yaml --no-agent',
  },
  poll: {
    usage: 'poll --workflow FILE (--dry-run | --once) [--output text|json] [FLAGS]',
    summary:
      "Asks the Workflow's tracker for its issues and dispatches them, once (--once) or only says what it would do (--dry-run).",
    flags: [
      WORKFLOW,
      { name: 'once', text: 'dispatch the eligible issues once, then exit' },
      { name: 'dry-run', text: 'print what would be dispatched; run nothing' },
      { name: 'output', value: 'text|json', default: 'text', text: 'the output format' },
      NO_AGENT,
      ...SSH_FLAGS,
    ],
    example: 'lorenz poll --workflow WORKFLOW.md --dry-run',
  },
  runner: {
    usage: 'runner [--inputs DIR] [--slot N] [--workspace DIR] [FLAGS] | runner --prepare [FLAGS]',
    summary:
      "Runs one slot inside a run Pod, or with --prepare a Workflow's warm-up (the controller writes these flags; a person rarely does).",
    flags: [
      { name: 'inputs', value: 'DIR', default: RUN_POD_PATHS.inputs, text: 'the rendered inputs' },
      { name: 'slot', value: 'N', default: '0', text: 'the ensemble slot' },
      {
        name: 'workspace',
        value: 'DIR',
        default: RUN_POD_PATHS.workspace,
        text: 'the workspace root',
      },
      {
        name: 'issue-state-file',
        value: 'FILE',
        default: ISSUE_STATE_PATH,
        text: "the issue's state, kept current by the controller",
      },
      {
        name: 'inputs-digest-file',
        value: 'FILE',
        text: 'the inputs digest recorded on the Pod (when unset: not checked)',
      },
      {
        name: 'termination-log',
        value: 'FILE',
        default: RUN_POD_PATHS.terminationLog,
        text: "where the run's summary is written for the controller",
      },
      { name: 'keep-workspace', text: 'keep the workspace (a claim outlives the Pod)' },
      NO_AGENT,
      { name: 'tools-url', value: 'URL', text: 'the agent-tools gateway (when unset: no tools)' },
      { name: 'tools-token-file', value: 'FILE', text: "the gateway's bearer token" },
      {
        name: 'tools-server-name',
        value: 'NAME',
        default: 'lorenz',
        text: 'the name the agent sees the gateway under',
      },
      { name: 'git-credentials', value: 'DIR', text: 'the per-host git credential files' },
      ...SSH_FLAGS.map((flag) => ({ ...flag, text: flag.text.replace(/ \(when unset.*\)$/, '') })),
      { name: 'ssh-host', value: 'USER@HOST', text: 'the SSH worker of this slot' },
      {
        name: 'source-digest',
        value: 'sha256:HEX',
        text: 'the claim was restored from a snapshot: check its prepared tree (.lorenz-source/) has this digest and make it the workspace, before any hook',
      },
      {
        name: 'prepare',
        text: "a warm-up, not a run: clone the default branch into the workspace's .lorenz-source/, run its setup and after_create, digest it (takes --inputs, --inputs-digest-file, --workspace, --git-credentials, --termination-log, --unless-commit)",
      },
      {
        name: 'unless-commit',
        value: 'SHA',
        text: "with --prepare: a head check, which prepares nothing: outcome unchanged when the default branch's head is still this commit, moved when it is not",
      },
    ],
    example: 'lorenz runner --inputs /lorenz/inputs --slot 0 --workspace /workspace',
  },
  controller: {
    usage: 'controller [--kubeconfig FILE] [--namespace NS] [--leader-elect] [FLAGS]',
    summary: 'Runs the operator: reconciles Workflows and IssueRuns, one Pod per run.',
    flags: [
      IN_CLUSTER_KUBECONFIG,
      { name: 'namespace', value: 'NS', text: 'watch only this namespace (when unset: all)' },
      { name: 'leader-elect', text: 'hold a Lease so that one replica reconciles' },
      { name: 'leader-election-namespace', value: 'NS', text: "the Lease's namespace" },
      { name: 'metrics-bind-address', value: 'ADDR', default: ':8080', text: 'Prometheus metrics' },
      {
        name: 'health-probe-bind-address',
        value: 'ADDR',
        default: ':8081',
        text: 'healthz and readyz',
      },
      { name: 'operator-image', value: 'IMAGE', text: "the image of the run Pods' runner" },
      {
        name: 'allowed-service-accounts',
        value: 'NAME,…',
        text: 'the service accounts a pod template may name',
      },
      {
        name: 'tools-bind-address',
        value: 'ADDR',
        default: ':8090',
        text: 'the agent-tools gateway (0: no agent tools)',
      },
      { name: 'tools-url', value: 'URL', text: 'the gateway URL run Pods use' },
      {
        name: 'webhook-bind-address',
        value: 'ADDR',
        default: '0',
        text: 'the webhook receiver, :8092 say (0: off; docs/webhooks.md)',
      },
      {
        name: 'archive-dsn',
        value: 'DSN',
        text: 'the run archive: sqlite:PATH, postgres://… or off',
      },
      {
        name: 'price-table',
        value: 'NAME',
        text: 'the ConfigMap of model prices, NAME or NAMESPACE/NAME (docs/budgets.md)',
      },
      { name: 'archive-log-cap', value: 'BYTES', text: "the most of a run's log archived" },
      {
        name: 'archive-give-up-after',
        value: 'DURATION',
        text: 'release an unarchivable run after this long',
      },
      {
        name: 'archive-api-bind-address',
        value: 'ADDR',
        text: "the archive's read API (when unset: :8091 in a cluster, 0 (off) on a laptop)",
      },
    ],
    example:
      'lorenz controller --kubeconfig ~/.kube/config --namespace lorenz --archive-dsn sqlite:runs.db',
  },
  server: {
    usage:
      'server [--kubeconfig FILE] [--bind-address ADDR] [--archive-dsn DSN | --archive-url URL]',
    summary:
      "Serves the web view and its read API: on a laptop as the kubeconfig's user on loopback, in a cluster checking each caller's bearer token (docs/web-view.md).",
    flags: [
      IN_CLUSTER_KUBECONFIG,
      {
        name: 'bind-address',
        value: 'ADDR',
        text: 'where to listen (when unset: 127.0.0.1:8090 on a laptop, :8090 in a cluster)',
      },
      {
        name: 'archive-dsn',
        value: 'DSN',
        text: 'the run archive, read directly: sqlite:PATH, postgres://… or off (when unset on a laptop: ~/.cache/lorenz/archive.db if it exists)',
      },
      {
        name: 'archive-url',
        value: 'URL',
        text: "read the run archive from the controller's read API, with the caller's token",
      },
      { name: 'namespace', short: 'n', value: 'NS', text: 'watch only this namespace' },
      { name: 'web-root', value: 'DIR', text: 'the built web view (when unset: dist/web)' },
      {
        name: 'auth',
        value: 'token|local',
        text: 'token: bearer tokens checked per request; local: the kubeconfig user',
      },
      {
        name: 'allow-remote-bind',
        text: 'let local mode listen beyond loopback (anyone who reaches it acts as you)',
      },
    ],
    example: 'lorenz server --kubeconfig ~/.kube/config   # then open http://127.0.0.1:8090',
  },
  'get runs': {
    usage: 'get runs [-n NS | -A] [--workflow W] [--issue ID] [--all] [-o table|wide|json]',
    summary: 'Lists IssueRuns; with --all, the archived ones too.',
    flags: [
      NAMESPACE,
      { name: 'all-namespaces', short: 'A', text: 'every namespace' },
      { name: 'workflow', value: 'W', text: "only this Workflow's runs" },
      { name: 'issue', value: 'ID', text: "only this issue's runs" },
      { name: 'all', text: 'include the runs only the archive keeps' },
      {
        name: 'output',
        short: 'o',
        value: 'table|wide|json',
        text: 'the output format (when unset: table)',
      },
      ...KUBE_FLAGS,
    ],
    example: 'lorenz get runs -A --all',
  },
  logs: {
    usage: 'logs RUN [-n NS] [-f] [--slot N] [--attempt N] [-o text|json]',
    summary: "Prints a run's transcript: hooks, agent turns and the end, live or from the archive.",
    flags: [
      NAMESPACE,
      { name: 'follow', short: 'f', text: 'keep printing until the run ends' },
      { name: 'slot', value: 'N', text: 'only this ensemble slot' },
      { name: 'attempt', value: 'N', text: 'only this attempt (when unset: the last)' },
      {
        name: 'output',
        short: 'o',
        value: 'text|json',
        default: 'text',
        text: 'the output format',
      },
      ...KUBE_FLAGS,
    ],
    example: 'lorenz logs eng-42 -n lorenz -f',
  },
  'describe run': {
    usage: 'describe run RUN [-n NS]',
    summary: "Shows a run's spec, status, slots, hooks and Events, live or from the archive.",
    flags: [NAMESPACE, ...KUBE_FLAGS],
    example: 'lorenz describe run eng-42 -n lorenz',
  },
  approve: {
    usage:
      'approve RUN [--deny REASON] [--always] [--answer TEXT] [--request ID] [-n NS] [--kubeconfig FILE]',
    summary:
      "Answers a request the run's agent waits on (status.inbox.pending): approves it, denies it, or answers a question, as a patch of the IssueRun's spec.decisions (docs/approvals.md).",
    flags: [
      { name: 'deny', value: 'REASON', text: 'deny the request; the reason is given to the agent' },
      { name: 'always', text: 'approve it and the same rule for the rest of the attempt' },
      {
        name: 'answer',
        value: 'TEXT',
        text: "the answer to a question (a question's only approval)",
      },
      {
        name: 'request',
        value: 'ID',
        text: 'the request to answer (when unset: the only, else the oldest, waiting)',
      },
      NAMESPACE,
      KUBE_FLAGS[0]!,
    ],
    example: 'lorenz approve eng-42 -n lorenz --deny "not on main"',
  },
  completion: {
    usage: 'completion bash|zsh',
    summary: 'Prints a shell completion script for lorenz.',
    flags: [],
    example:
      'source <(lorenz completion bash)    # or, in ~/.zshrc: source <(lorenz completion zsh)',
  },
};

const flagSynopsis = (flag: FlagHelp): string =>
  [
    flag.short ? `-${flag.short}, ` : '    ',
    `--${flag.name}`,
    flag.value ? ` ${flag.value}` : '',
  ].join('');

/** The help of one command: usage, what it does, its flags with their defaults, an example. */
export function formatCommandHelp(words: string, help: CommandHelp): string {
  const rows = help.flags.map((flag) => [flagSynopsis(flag), flag] as const);
  const width = Math.max(0, ...rows.map(([synopsis]) => synopsis.length)) + 2;
  const flags = rows.map(
    ([synopsis, flag]) =>
      `  ${synopsis.padEnd(width)}${flag.text}${flag.default === undefined ? '' : ` (default: ${flag.default})`}`,
  );
  return [
    `usage: lorenz ${help.usage}`,
    '',
    help.summary,
    ...(flags.length > 0 ? ['', 'flags:', ...flags] : []),
    '',
    'example:',
    `  ${help.example}`,
    '',
    `\`lorenz --help\` lists every command; \`lorenz ${words} --help\` prints this.`,
  ].join('\n');
}
