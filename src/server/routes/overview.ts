import { sendJson } from '../reply.js';
import { USAGE_PARAMS, namespaceParam, paramsOf, usageQueryOf } from '../query.js';
import { runsPage } from '../runs-page.js';
import type { RunSummary, UsageReport, WhoAmI, WorkflowList } from '../view-api.js';
import {
  readable,
  readsOf,
  requireListRuns,
  requireSynced,
  type Call,
  type ViewContext,
} from './context.js';

/** The overview's reads: who the caller is, the Workflows it may see, the usage by day. */

export async function whoami(ctx: ViewContext, { who, response }: Call): Promise<void> {
  const body: WhoAmI = {
    mode: ctx.access.mode,
    username: who.caller.username,
    groups: who.caller.groups,
    archive: ctx.archive !== undefined,
  };
  sendJson(response, 200, body);
}

export async function workflows(ctx: ViewContext, { who, url, response }: Call): Promise<void> {
  requireSynced(ctx);
  const namespace = namespaceParam(paramsOf(url, ['namespace']));
  const all = ctx.cache.workflows().filter((each) => !namespace || each.namespace === namespace);
  const cluster = await who.mayReadWorkflows('');
  const allowed = new Set<string>();
  if (!cluster)
    await Promise.all(
      [...new Set(all.map((each) => each.namespace))].map(async (each) => {
        if (await who.mayReadWorkflows(each)) allowed.add(each);
      }),
    );
  const shown = all
    .filter((each) => cluster || allowed.has(each.namespace))
    .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  const since = new Date(Date.now() - 24 * 3600_000).toISOString();
  const failures = await runsPage(
    {
      ...(namespace ? { namespace } : {}),
      query: { phase: 'Failed', since, limit: 20 },
    },
    { cache: ctx.cache, archive: readsOf(ctx, who), readable: (ns) => readable(who, ns) },
  ).catch(() => ({ runs: [] as RunSummary[] }));
  const body: WorkflowList = { workflows: shown, recentFailures: failures.runs };
  sendJson(response, 200, body);
}

export async function usage(ctx: ViewContext, { who, url, response }: Call): Promise<void> {
  const { namespace, query } = usageQueryOf(paramsOf(url, USAGE_PARAMS));
  const archive = readsOf(ctx, who);
  if (!archive) return sendJson(response, 200, { rows: [] } satisfies UsageReport);
  await requireListRuns(who, namespace);
  const rows = await archive.usageByDay({
    ...query,
    ...(namespace ? { namespaces: [namespace] } : {}),
  });
  // The read API filters for the caller; rows from the store itself are filtered here.
  const allowed = archive.filtered
    ? undefined
    : await readable(
        who,
        rows.map((row) => row.namespace),
      );
  const body: UsageReport = {
    rows: rows.filter((row) => !allowed || allowed.has(row.namespace)),
  };
  sendJson(response, 200, body);
}
