import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import { FINISHED, findCondition, type IssueRun, type Workflow } from '../../api/index.js';
import {
  createToolsGateway,
  startToolsServer,
  type ResolvedRun,
  type ToolCallRecord,
  type ToolsServer,
} from '../../tools/index.js';
import type { KubeClient } from '../runtime/client.js';
import { SECRETS, isNotFound, resourcePath } from '../runtime/client.js';
import type { Manager } from '../runtime/manager.js';
import { ANNOTATION_ISSUE_ID, ANNOTATION_TOKEN_SHA256 } from '../shared/constants.js';
import { toolsTokenSecretName } from '../shared/object-names.js';
import { ISSUERUNS, WORKFLOWS } from '../shared/resources.js';
import type { TrackerCache } from '../shared/trackers.js';
import { createWorkflowConfigCache } from '../shared/config-snapshot.js';
import { createInboxStore } from './inbox-store.js';
import { runEventWriter } from './run-event.js';
import { budgetAnswer } from './budget-answer.js';
import { composeRunBudget } from '../shared/run-budget.js';
import type { PriceTableSource } from '../shared/price-table-source.js';

export interface ToolsControllerOptions {
  client: KubeClient;
  logger: Logger;
  identity: string;
  /** host:port to listen on (`:8090`; `127.0.0.1:0` in tests). */
  bindAddress: string;
  /** The controller's adapters, shared with the Workflow reconciler's polls. */
  trackers: TrackerCache;
  /** The price table, for budget_status; absent: tokens only. */
  priceTable?: PriceTableSource | undefined;
  /** The clock budget days are counted by. */
  now?: (() => Date) | undefined;
}

const isFinished = (run: IssueRun): boolean =>
  findCondition(run.status?.conditions, FINISHED)?.status === 'True';

/**
 * The agent-tools gateway of the controller (issue 12): serves MCP on its own port to run
 * Pods, resolving each token from the IssueRun it names and the hash on that attempt's
 * token Secret, and talking to the run's tracker with the Workflow's key. It writes nothing
 * but the tracker, a `ToolCalled` Event per call, and for the runner's inbox the IssueRun's
 * request and steer-mark annotations and an Event per decision its policy made alone. Every replica serves it: a token is
 * verified from the cluster, not from memory, so a restarted controller still accepts it.
 */
// eslint-disable-next-line max-lines-per-function -- a factory: the closures it returns share the state it keeps
export async function setupToolsGateway(
  manager: Manager,
  options: ToolsControllerOptions,
): Promise<ToolsServer> {
  const { client, logger } = options;
  const issueRuns = manager.informer<IssueRun>(ISSUERUNS);
  const workflows = manager.informer<Workflow>(WORKFLOWS);
  const loadConfig = createWorkflowConfigCache(client);
  const calls = new Counter({
    name: 'lorenz_tool_calls_total',
    help: 'Agent tool calls served by the gateway, by tool and outcome.',
    labelNames: ['tool', 'outcome'] as const,
    registers: [manager.metrics.registry],
  });

  const configOf = async (run: IssueRun) => {
    const workflow = workflows.get(run.metadata.namespace, run.spec.workflowRef.name);
    const snapshot = workflow?.status?.lastGoodConfigMap;
    if (!workflow || !snapshot) return null;
    const runnable = await loadConfig(run.metadata.namespace ?? '', snapshot);
    return { workflow, config: runnable.loaded.config };
  };

  async function resolveRun(
    namespace: string,
    name: string,
    attempt: number,
  ): Promise<ResolvedRun | null> {
    const run = issueRuns.get(namespace, name);
    if (!run?.metadata.uid) return null;
    let secret: { metadata?: { annotations?: Record<string, string> } };
    try {
      secret = await client.request({
        path: resourcePath(SECRETS, namespace, toolsTokenSecretName(name, attempt)),
      });
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    const tokenHash = secret.metadata?.annotations?.[ANNOTATION_TOKEN_SHA256];
    const found = await configOf(run);
    if (!tokenHash || !found) return null;
    const tools = found.workflow.spec.tools;
    return {
      uid: run.metadata.uid,
      tokenHash,
      issueId:
        run.metadata.annotations?.[ANNOTATION_ISSUE_ID] ??
        run.spec.issue.id ??
        run.spec.issue.identifier,
      issueIdentifier: run.spec.issue.identifier,
      trackerKind: found.config.tracker.kind,
      workflow: found.config,
      allowedStates: tools?.allowedStates ?? null,
      createIssue: tools?.createIssue === true,
      linearGraphql: tools?.linearGraphql === true,
      // A finished run's token is revoked, whatever its Secret says.
      revoked: isFinished(run) || run.spec.cancelRequested === true || tools?.enabled === false,
    };
  }

  async function trackerFor(verified: { namespace: string; run: string }) {
    const run = issueRuns.get(verified.namespace, verified.run);
    const found = run ? await configOf(run) : null;
    if (!found) return null;
    return (await options.trackers.get(found.workflow, found.config)).writer ?? null;
  }

  const event = runEventWriter(client, options.identity, logger);
  /** Each call becomes an Event on its IssueRun (tool and target, never the arguments). */
  function toolCalled(record: ToolCallRecord): void {
    calls.inc({ tool: record.tool, outcome: record.ok ? 'ok' : 'error' });
    event({
      namespace: record.namespace,
      run: record.run,
      uid: record.uid,
      kind: 'tool',
      action: 'CallTool',
      reason: 'ToolCalled',
      type: record.ok ? 'Normal' : 'Warning',
      note: `${record.tool} on ${record.target} (attempt ${record.attempt}): ${record.ok ? 'ok' : 'failed'}`,
    });
  }

  const gateway = createToolsGateway({
    resolveRun,
    trackerFor,
    recorder: { toolCalled },
    logger,
    // The runner's inbox (src/api/inbox.ts): requests onto the IssueRun, answers from its cache.
    inbox: { store: createInboxStore({ client, issueRuns, event }) },
    budget: async (verified) => {
      const run = issueRuns.get(verified.namespace, verified.run);
      const found = run ? await configOf(run) : null;
      if (!run || !found) return null;
      const budget = composeRunBudget({
        config: found.config,
        workflow: found.workflow,
        run,
        runs: () => issueRuns.list(verified.namespace),
        prices: await options.priceTable?.current(),
        now: (options.now ?? (() => new Date()))(),
      });
      return budgetAnswer(budget, run, verified.attempt);
    },
  });
  // A run that ends (or is cancelled, or goes) takes its tokens with it at once, not when
  // the gateway's cache of verified tokens next expires.
  const revokeIfDone = (run: IssueRun) => {
    if (isFinished(run) || run.spec.cancelRequested || run.metadata.deletionTimestamp) {
      gateway.revoke(run.metadata.namespace ?? '', run.metadata.name ?? '');
    }
  };
  issueRuns.onUpdate((_old, run) => revokeIfDone(run));
  issueRuns.onDelete((run) =>
    gateway.revoke(run.metadata.namespace ?? '', run.metadata.name ?? ''),
  );
  const server = await startToolsServer({ bindAddress: options.bindAddress, gateway });
  logger.info({ port: server.port }, 'agent tools gateway listening');
  return server;
}
