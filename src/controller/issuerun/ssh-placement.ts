import { Reasons, type IssueRun, type Workflow } from '../../api/index.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import { runIssue } from '../shared/run-issue.js';
import { ensembleSize } from '../../workspace/ensemble.js';
import type { KubeClient } from '../runtime/client.js';
import { checkSshKey } from './ssh-key.js';
import { chooseHosts, liveHostLoad, type SlotToPlace } from './worker-host.js';

/** What the Pods of an attempt on SSH workers are given (pod-builder's RunPodSsh, per slot). */
export interface SshWorkers {
  secretName: string;
  /** Slot → its worker.ssh_hosts entry. */
  hosts: ReadonlyMap<number, string>;
}

export type SshPlan =
  /** No worker.ssh_hosts: the Pods run the lifecycle themselves. */
  | { kind: 'local' }
  /** `fresh` slots were placed just now: their hosts go into the status before the Pods. */
  | ({ kind: 'ready'; fresh: readonly number[] } & SshWorkers)
  /** No Pod yet: the run waits with this reason (stalled: on the user, else on the hosts). */
  | { kind: 'wait'; stalled: boolean; reason: string; message: string; requeueMs: number }
  /** No Pod ever: the ensemble cannot fit on the hosts. */
  | { kind: 'fail'; reason: string; message: string };

/** When to look again, by what the run waits for. */
export const SSH_REQUEUE_MS = {
  /** The Secret or the Workflow's reference to it (Secrets are not watched). */
  secret: 10_000,
  /** Room on a host: a slot of another run ends (that run's status changes, not this one's). */
  hostsBusy: 5_000,
} as const;

/** The slots of a run's first attempt; none when the issue does not normalize (ensure says why). */
export function firstAttemptSlots(run: IssueRun, config: WorkflowConfig): SlotToPlace[] {
  let size: number;
  try {
    size = ensembleSize(runIssue(run), config.agent.ensembleSize);
  } catch {
    return [];
  }
  const attempt = run.spec.attempt ?? 1;
  return Array.from({ length: size }, (_, slot) => ({ slot, attempt }));
}

/**
 * The SSH side of starting an attempt: the key Secret must be there, and every slot gets a
 * host (worker-host.ts) counted against the live slots of the Workflow's runs in `runs`.
 */
export async function planSsh(options: {
  client: KubeClient;
  workflow: Workflow;
  config: WorkflowConfig;
  run: IssueRun;
  slots: readonly SlotToPlace[];
  /**
   * The runs of the namespace as freshly as the controller knows them. A function: listing
   * them is O(runs), paid only by a Workflow with SSH workers (eagerly, every start of every
   * run paid it: 10 000 runs took 55 ms of CPU each).
   */
  runs: () => readonly IssueRun[];
}): Promise<SshPlan> {
  const { config, run } = options;
  if (config.worker.sshHosts.length === 0) return { kind: 'local' };
  const key = await checkSshKey(options.client, options.workflow);
  if (!key.ok) {
    return { kind: 'wait', stalled: true, ...key, requeueMs: SSH_REQUEUE_MS.secret };
  }
  const load = liveHostLoad(options.runs(), run.spec.workflowRef.name, {
    uid: run.metadata.uid ?? '',
    placing: options.slots.map((entry) => entry.slot),
  });
  const choice = chooseHosts({
    hosts: config.worker.sshHosts,
    perHostCap: config.worker.maxConcurrentAgentsPerHost,
    load,
    slots: options.slots,
    recorded: run.status?.slots,
  });
  if (choice.kind === 'never') {
    return { kind: 'fail', reason: Reasons.SshHostsBusy, message: choice.message };
  }
  if (choice.kind === 'busy') {
    return {
      kind: 'wait',
      stalled: false,
      reason: Reasons.SshHostsBusy,
      message: choice.message,
      requeueMs: SSH_REQUEUE_MS.hostsBusy,
    };
  }
  return { kind: 'ready', secretName: key.secretName, hosts: choice.hosts, fresh: choice.fresh };
}
