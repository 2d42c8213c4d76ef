import {
  InboxDecisionError,
  type DecisionInput,
  type DecisionPlan,
  type SpecVerdict,
} from '../api/inbox-decisions.js';
import { writeDecision } from '../server/decisions.js';
import { parseRunArgs } from './runs/args.js';
import { reportingFailures } from './runs/errors.js';
import { escapeCell } from './runs/escape.js';
import type { RunCommandDeps } from './runs/get-runs.js';
import { userCluster } from './runs/kube.js';
import { UsageError } from './usage.js';

type Output = (text: string) => void;

/** The flags `lorenz approve` parses (their help: cli/command-help.ts). */
export const APPROVE_OPTIONS = {
  deny: { type: 'string' },
  always: { type: 'boolean' },
  answer: { type: 'string' },
  request: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  kubeconfig: { type: 'string' },
} as const;

/** The verdict the flags ask for; contradicting flags are a usage error. */
export function verdictOf(values: {
  deny?: string | undefined;
  always?: boolean | undefined;
  answer?: string | undefined;
}): SpecVerdict {
  if (values.deny !== undefined && (values.always || values.answer !== undefined))
    throw new UsageError('approve: --deny cannot be given with --always or --answer');
  if (values.always && values.answer !== undefined)
    throw new UsageError('approve: --always approves a permission request; --answer a question');
  if (values.deny !== undefined) return 'deny';
  if (values.answer !== undefined) return 'answer';
  return values.always ? 'approve_always' : 'approve';
}

const DONE: Record<SpecVerdict, string> = {
  approve: 'approved',
  approve_always: 'approved for the rest of the attempt',
  deny: 'denied',
  answer: 'answered',
};

/** The line `lorenz approve` prints for what it wrote. */
export function describePlan(plan: DecisionPlan, namespace: string, name: string): string {
  const { request, entry } = plan;
  const what = request.command ?? request.message ?? request.title;
  return [
    `${DONE[entry.verdict]} request ${request.id} (${request.kind}${request.toolKind ? ` ${request.toolKind}` : ''}: ${escapeCell(what)})`,
    ` of run ${namespace}/${name}`,
    entry.by ? ` as ${escapeCell(entry.by)}` : '',
    entry.reason ? `; reason: ${escapeCell(entry.reason)}` : '',
    '\n',
  ].join('');
}

/**
 * `lorenz approve RUN [--deny REASON] [--always] [--answer TEXT] [--request ID]`: answers a
 * request the run's agent waits on (docs/approvals.md) by a patch of spec.decisions, as the
 * kubeconfig's user: whoever may patch the IssueRun may answer.
 */
export async function approveCommand(
  args: string[],
  out: Output,
  err: Output,
  deps: Pick<RunCommandDeps, 'cluster'> = {},
): Promise<number> {
  const { values, name } = parseRunArgs(args, APPROVE_OPTIONS, 'approve');
  const verdict = verdictOf(values);
  const cluster = (deps.cluster ?? userCluster)(values.kubeconfig);
  const namespace = values.namespace ?? cluster.namespace;
  const by = cluster.kubeConfig.getCurrentUser()?.name;
  const input: DecisionInput = {
    verdict,
    ...(values.request !== undefined ? { requestId: values.request } : {}),
    ...(values.deny ? { reason: values.deny } : {}),
    ...(values.answer !== undefined ? { answer: values.answer } : {}),
    ...(by ? { by } : {}),
  };
  return reportingFailures(err, async () => {
    try {
      const plan = await writeDecision(cluster.client, namespace, name, input);
      if (!plan) {
        err(`lorenz: not_found: run ${namespace}/${name} not found in the cluster\n`);
        return 1;
      }
      out(describePlan(plan, namespace, name));
      return 0;
    } catch (error) {
      if (!(error instanceof InboxDecisionError)) throw error;
      const hint =
        error.code === 'verdict_mismatch' && verdict === 'approve'
          ? ' (--answer TEXT answers a question, --deny REASON declines it)'
          : '';
      err(`lorenz: ${error.code}: run ${namespace}/${name}: ${error.message}${hint}\n`);
      return 1;
    } finally {
      cluster.client.close();
    }
  });
}
