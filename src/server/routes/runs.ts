import { ApiError } from '../errors.js';
import { sendJson } from '../reply.js';
import { RUNS_PARAMS, paramsOf, runQueryOf, uidOf } from '../query.js';
import { runDetail } from '../run-detail.js';
import { runsPage } from '../runs-page.js';
import {
  depsOf,
  readable,
  readsOf,
  requireListRuns,
  requireRun,
  requireSynced,
  type Call,
  type ObjectCall,
  type ViewContext,
} from './context.js';

/** The runs list (live and archived) and one run's detail. */

export async function listRuns(ctx: ViewContext, { who, url, response }: Call): Promise<void> {
  requireSynced(ctx);
  const params = paramsOf(url, [...RUNS_PARAMS.filter((key) => key !== 'deleted'), 'source']);
  const source = params.get('source');
  params.delete('source');
  if (source !== undefined && source !== 'live' && source !== 'archive')
    throw new ApiError(
      'invalid_parameter',
      `query parameter source: want live or archive, got ${JSON.stringify(source)}`,
      'source',
    );
  const { namespace, query } = runQueryOf(params);
  await requireListRuns(who, namespace);
  const page = await runsPage(
    { ...(namespace ? { namespace } : {}), query, ...(source ? { source } : {}) },
    { cache: ctx.cache, archive: readsOf(ctx, who), readable: (ns) => readable(who, ns) },
  );
  sendJson(response, 200, page);
}

export async function getRun(ctx: ViewContext, call: ObjectCall): Promise<void> {
  const { who, url, response, namespace, name } = call;
  const uid = uidOf(paramsOf(url, ['uid']));
  await requireRun(who, namespace);
  sendJson(response, 200, await runDetail(depsOf(ctx, who), namespace, name, uid));
}
