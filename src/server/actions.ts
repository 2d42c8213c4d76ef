import { API_VERSION, ISSUERUN_PLURAL, WORKFLOW_PLURAL } from '../api/constants.js';
import { KubeApiError, resourcePath, type KubeClient } from '../controller/runtime/client.js';
import type { CallerAccess } from './access.js';
import { ISSUERUNS, WORKFLOWS } from './cache.js';
import { ApiError } from './errors.js';
import { get, isRecord, num, str, type Json } from './json.js';
import type { ActionResult } from './view-api.js';

/**
 * The view's writes. Each is reviewed first (a clean 403 naming the permission), then made
 * with the caller's own client, so the apiserver's RBAC and admission decide as they would
 * for kubectl: the server's ServiceAccount never writes.
 *
 * Retry of a Failed run makes a NEW IssueRun, `<name>-retry-<attempt>` (a retry of a retry
 * counts on from the original name), with the run's spec, `spec.attempt` one past the last
 * attempt it ran, and its labels and owner (so the Workflow counts it and takes it with it
 * when deleted). The failed run stays as it is, for its history. A second retry of the same
 * run answers 409: the name is taken.
 */

export type Action = 'cancel' | 'retry' | 'suspend' | 'resume';

const RETRY_SUFFIX = /-retry-\d+$/;

export function retryName(name: string, attempt: number): string {
  const base = name.replace(RETRY_SUFFIX, '');
  const suffix = `-retry-${attempt}`;
  return `${base.slice(0, 253 - suffix.length).replace(/[-.]+$/, '')}${suffix}`;
}

/** The retry of a Failed run, as the object to create (pure). */
export function retryObject(run: Json): Json {
  const meta = get(run, 'metadata');
  const spec = isRecord(get(run, 'spec')) ? (get(run, 'spec') as Json) : {};
  const last = Math.max(num(get(run, 'status', 'attempt')) ?? 0, num(spec.attempt) ?? 1);
  const attempt = last + 1;
  const name = str(get(meta, 'name')) ?? '';
  const { cancelRequested: _cancel, ...rest } = spec;
  const labels = get(meta, 'labels');
  const owners = get(meta, 'ownerReferences');
  return {
    apiVersion: API_VERSION,
    kind: 'IssueRun',
    metadata: {
      name: retryName(name, attempt),
      namespace: str(get(meta, 'namespace')) ?? '',
      ...(isRecord(labels) ? { labels } : {}),
      ...(Array.isArray(owners) ? { ownerReferences: owners } : {}),
      annotations: { 'lorenz.dev/retry-of': name },
    },
    spec: { ...rest, attempt },
  };
}

function kubeFailure(error: unknown, what: string): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof KubeApiError) {
    const detail = error.message.split('\n')[0] ?? '';
    if (error.statusCode === 403) return new ApiError('forbidden', detail);
    if (error.statusCode === 404) return new ApiError('not_found', `${what} not found`);
    if (error.statusCode === 409) return new ApiError('conflict', detail);
    if (error.statusCode === 401) return new ApiError('unauthenticated', detail);
    if (error.statusCode === 422 || error.statusCode === 400)
      return new ApiError('invalid_parameter', detail, 'body');
  }
  return new ApiError('kube_unavailable', `the Kubernetes API failed: ${(error as Error).message}`);
}

async function require(
  access: CallerAccess,
  verb: 'patch' | 'create',
  resource: string,
  namespace: string,
  name?: string,
): Promise<void> {
  if (!(await access.may({ verb, resource, namespace, ...(name ? { name } : {}) })))
    throw new ApiError(
      'forbidden',
      `${access.caller.username} may not ${verb} ${resource}.lorenz.dev${name ? ` ${name}` : ''} in namespace ${namespace}`,
    );
}

export async function runAction(
  access: CallerAccess,
  action: Action,
  namespace: string,
  name: string,
): Promise<ActionResult> {
  if (action === 'cancel') await require(access, 'patch', ISSUERUN_PLURAL, namespace, name);
  else if (action === 'retry') await require(access, 'create', ISSUERUN_PLURAL, namespace);
  else await require(access, 'patch', WORKFLOW_PLURAL, namespace, name);
  const writer = access.writer();
  const client: KubeClient = writer.client;
  try {
    if (action === 'cancel') {
      const what = `IssueRun ${namespace}/${name}`;
      await client
        .request({
          method: 'PATCH',
          path: resourcePath(ISSUERUNS, namespace, name),
          body: { spec: { cancelRequested: true } },
        })
        .catch((error: unknown) => {
          throw kubeFailure(error, what);
        });
      return { action: 'cancel_requested', namespace, name };
    }
    if (action === 'retry') {
      const what = `IssueRun ${namespace}/${name}`;
      const run = await client
        .request<Json>({ path: resourcePath(ISSUERUNS, namespace, name) })
        .catch((error: unknown) => {
          throw kubeFailure(error, what);
        });
      const phase = str(get(run, 'status', 'phase')) ?? 'Pending';
      if (phase !== 'Failed')
        throw new ApiError('conflict', `${what} is ${phase}: only a Failed run is retried`);
      const object = retryObject(run);
      const created = await client
        .request<Json>({ method: 'POST', path: resourcePath(ISSUERUNS, namespace), body: object })
        .catch((error: unknown) => {
          const failure = kubeFailure(error, what);
          if (failure.code === 'conflict')
            throw new ApiError(
              'conflict',
              `${what} was retried already (${str(get(object, 'metadata', 'name'))} exists)`,
            );
          throw failure;
        });
      return { action: 'retried', namespace, name: str(get(created, 'metadata', 'name')) ?? '' };
    }
    const suspend = action === 'suspend';
    await client
      .request({
        method: 'PATCH',
        path: resourcePath(WORKFLOWS, namespace, name),
        body: { spec: { suspend } },
      })
      .catch((error: unknown) => {
        throw kubeFailure(error, `Workflow ${namespace}/${name}`);
      });
    return { action: suspend ? 'suspended' : 'resumed', namespace, name };
  } finally {
    writer.release();
  }
}
