import type http from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { ISSUERUN_PLURAL, WORKFLOW_PLURAL } from '../api/constants.js';
import { createKubeClient, type KubeClient } from '../controller/runtime/client.js';
import { tokenOf, type AccessAttributes, type AccessAuthorizer, type Caller } from './auth.js';

/**
 * What one request may do, in the server's two modes:
 * - `cluster`: the request's bearer token is the caller (TokenReview); each read and write is
 *   a SubjectAccessReview for that user, and writes go to the apiserver with the caller's own
 *   token, so the server's ServiceAccount needs no write access at all.
 * - `local` (a laptop, like `kubectl proxy`): the kubeconfig's user is the only caller; what
 *   it may do is what the apiserver lets that kubeconfig do, so nothing is reviewed here.
 */
export interface CallerAccess {
  caller: Caller;
  /** The token to forward to the archive's read API (cluster: the caller's). */
  token: string | undefined;
  may(attributes: AccessAttributes): Promise<boolean>;
  /** Runs (live and archived) and Events of `namespace` ('' : every namespace). */
  mayReadRuns(namespace: string): Promise<boolean>;
  mayReadWorkflows(namespace: string): Promise<boolean>;
  /** A client that acts as the caller; release it when done. */
  writer(): { client: KubeClient; release(): void };
}

export interface AccessControl {
  readonly mode: 'cluster' | 'local';
  forRequest(request: http.IncomingMessage): Promise<CallerAccess>;
}

export function clusterAccess(kubeConfig: KubeConfig, authorizer: AccessAuthorizer): AccessControl {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  return {
    mode: 'cluster',
    async forRequest(request) {
      const token = tokenOf(request.headers);
      const caller = await authorizer.authenticate(token);
      const may = (attributes: AccessAttributes) => authorizer.may(caller, attributes);
      return {
        caller,
        token,
        may,
        mayReadRuns: (namespace) => may({ verb: 'list', resource: ISSUERUN_PLURAL, namespace }),
        mayReadWorkflows: (namespace) =>
          may({ verb: 'list', resource: WORKFLOW_PLURAL, namespace }),
        writer() {
          // The server's cluster (URL, CA) with the caller's token and nothing of the
          // server's own credentials.
          const config = new KubeConfig();
          config.loadFromOptions({
            clusters: [cluster],
            users: [{ name: 'caller', token }],
            contexts: [{ name: 'caller', cluster: cluster.name, user: 'caller' }],
            currentContext: 'caller',
          });
          const client = createKubeClient(config);
          return { client, release: () => client.close() };
        },
      };
    },
  };
}

interface SelfSubjectReview {
  status?: { userInfo?: { username?: string; groups?: string[] } };
}

/** Local mode: who the kubeconfig's user is, asked once (SelfSubjectReview, Kubernetes ≥ 1.28). */
export async function localAccess(
  kubeConfig: KubeConfig,
  client: KubeClient,
): Promise<AccessControl> {
  let caller: Caller = { username: kubeConfig.getCurrentUser()?.name ?? 'kubeconfig', groups: [] };
  try {
    const review = await client.request<SelfSubjectReview>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    const info = review.status?.userInfo;
    if (info?.username) caller = { username: info.username, groups: info.groups ?? [] };
  } catch {
    // An older apiserver: the kubeconfig's user name is as good as it gets.
  }
  const options: { headers?: Record<string, unknown> } = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const header = options.headers?.Authorization ?? options.headers?.authorization;
  const token = typeof header === 'string' ? /^Bearer\s+(\S+)/i.exec(header)?.[1] : undefined;
  const yes = async () => true;
  const access: CallerAccess = {
    caller,
    token,
    may: yes,
    mayReadRuns: yes,
    mayReadWorkflows: yes,
    writer: () => ({ client, release() {} }),
  };
  return { mode: 'local', forRequest: async () => access };
}
