import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/** Thrown for bad command-line usage; the CLI prints the message and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const USAGE = `usage:
  lorenz workflow validate FILE|- [--allowed-service-accounts NAME,…]
  lorenz prompt render --workflow FILE --issue ISSUE [--attempt N] [--slot I --size N]
  lorenz hook render --workflow FILE --hook NAME --issue ISSUE
  lorenz run --workflow FILE --issue ISSUE [--no-agent] [--attempt N]
             [--git-credentials DIR|FILE]   (or $LORENZ_GIT_CREDENTIALS; workspace.git)
             [--ssh-key FILE] [--known-hosts FILE]
                                (worker.ssh_hosts; default ~/.ssh/id_ed25519, ~/.ssh/known_hosts)
  lorenz poll --workflow FILE (--dry-run | --once) [--output text|json] [--no-agent]
              [--ssh-key FILE] [--known-hosts FILE]
  lorenz runner --inputs DIR --slot N --workspace DIR      (inside a run Pod)
  lorenz controller [--kubeconfig F] [--namespace NS] [--leader-elect]
                    [--metrics-bind-address ADDR] [--health-probe-bind-address ADDR]
                    [--allowed-service-accounts NAME,…] [--leader-election-namespace NS]
                    [--tools-bind-address ADDR (0: no agent tools)] [--tools-url URL]
                    [--operator-image IMAGE]
                    [--archive-dsn sqlite:PATH|postgres://…|off] [--archive-log-cap BYTES]
                    [--archive-give-up-after DURATION]
                    [--archive-api-bind-address ADDR (default :8091 in a cluster, 0 on a laptop)]
                    [--webhook-bind-address ADDR (0: off; docs/webhooks.md)]
  lorenz server [--kubeconfig F] [--bind-address ADDR (default 127.0.0.1:8090)] [--namespace NS]
                [--archive-dsn DSN | --archive-url URL] [--web-root DIR] [--auth token|local]
      (the web view: docs/web-view.md; local mode binds loopback only unless --allow-remote-bind)
  lorenz completion bash|zsh                                (shell completion)
  lorenz get runs [-n NS | -A] [--workflow W] [--issue ID] [--all] [-o table|wide|json]
  lorenz logs RUN [-n NS] [-f] [--slot N] [--attempt N] [-o text|json]
  lorenz describe run RUN [-n NS]
      (the run commands take [--kubeconfig F] [--archive-dsn DSN] [--archive-url URL]; the
       archive is found from the kubeconfig alone when neither is given: docs/cli-runs.md)
  lorenz approve RUN [--deny REASON] [--always] [--answer TEXT] [--request ID]
                 [-n NS] [--kubeconfig F]
      (answers what the run's agent waits on: a patch of spec.decisions; docs/approvals.md)

ISSUE is a YAML or JSON file holding one issue, with the snake_case keys templates read as
issue.* and IssueRun spec.issue holds: identifier and title required; id, description,
priority, state, branch_name, url, labels, blocked_by, … optional.

workflow validate FILE checks a WORKFLOW.md, or YAML holding Workflow and IssueRun manifests
(several documents, or \`kustomize build\` output on stdin with -) as the cluster would: the
CRD schema and rules, the controller's pod template rules, the WORKFLOW.md inside. Each
problem is a line \`lorenz: <code>: FILE:LINE: document N (Kind/name): <field>: <why>\` on
stderr; other kinds are skipped and counted; exit 2 when anything is refused.

\`lorenz COMMAND --help\` (or -h) prints that command's usage, flags, defaults and an example.

exit codes: 0 success, 1 the run failed, 2 bad usage or an invalid workflow or issue`;

/** Parse a non-negative integer option, naming the flag when it is not one. */
export function integerOption(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new UsageError(`${flag} must be a non-negative integer, got '${value}'`);
  return Number(value);
}

/** The flags of a command that takes no positionals; an unknown flag is refused. */
export function parseFlags<O extends ParseArgsOptionsConfig>(args: string[], options: O) {
  return parseArgs({ args, strict: true, options }).values;
}

/** The value of an --output flag, one of `allowed`; when unset, the first. */
export function outputOption<const T extends string>(
  value: string | undefined,
  allowed: readonly [T, ...T[]],
): T {
  const output = value ?? allowed[0];
  if (!allowed.some((each) => each === output)) {
    const choices = `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}`;
    throw new UsageError(`--output must be ${choices}, got '${output}'`);
  }
  return output as T;
}

export function requireOption(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`missing required option ${flag}`);
  return value;
}
