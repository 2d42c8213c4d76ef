import { createHash } from 'node:crypto';
import type { KubeClient } from '../controller/runtime/client.js';
import { GROUP, ISSUERUN_PLURAL } from '../api/constants.js';
import { ApiError } from './errors.js';

/**
 * Who may read what: Kubernetes decides, not the archive. A caller's bearer token is checked
 * with a TokenReview, and each namespace it reads with a SubjectAccessReview for that user
 * (`list issueruns.lorenz.dev` there): the archive shows nobody a run their RBAC would not
 * show them in the cluster. Both answers are cached for a few seconds, so a page of runs
 * over many namespaces costs one review per namespace, not one per row.
 */
export interface Caller {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface Authorizer {
  /** The caller of a token; ApiError unauthenticated when the apiserver does not know it. */
  authenticate(token: string): Promise<Caller>;
  /** Whether the caller may list IssueRuns in `namespace` ('' : in every namespace). */
  mayList(caller: Caller, namespace: string): Promise<boolean>;
}

const TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const ACCESS_REVIEWS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  error?: string;
}

/** A small TTL map: entries expire, and it never holds more than `max`. */
function ttlCache<T>(ttlMs: number, max: number) {
  const entries = new Map<string, { value: T; until: number }>();
  return {
    get(key: string): T | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.until > Date.now()) return entry.value;
      entries.delete(key);
      return undefined;
    },
    set(key: string, value: T): void {
      if (entries.size >= max) entries.delete(entries.keys().next().value ?? '');
      entries.set(key, { value, until: Date.now() + ttlMs });
    },
  };
}

/** What a SubjectAccessReview asks: may the caller `verb` `resource` (in `namespace`)? */
export interface AccessAttributes {
  verb: 'get' | 'list' | 'watch' | 'patch' | 'create' | 'update' | 'delete';
  /** Of group lorenz.dev unless `group` says otherwise. */
  resource: string;
  group?: string;
  /** '' or unset: in every namespace. */
  namespace?: string;
  name?: string;
}

/** The view server's reviews: any verb on any resource, beside the archive API's list. */
export interface AccessAuthorizer extends Authorizer {
  may(caller: Caller, attributes: AccessAttributes): Promise<boolean>;
}

export interface AuthorizerOptions {
  /** How long a review's answer is reused; default 10 s. */
  cacheMs?: number;
}

export function kubeAuthorizer(
  client: KubeClient,
  options: AuthorizerOptions = {},
): AccessAuthorizer {
  const ttl = options.cacheMs ?? 10_000;
  const callers = ttlCache<Caller>(ttl, 1000);
  const decisions = ttlCache<boolean>(ttl, 10_000);

  async function review<T>(path: string, body: object): Promise<T> {
    try {
      return await client.request<T>({ method: 'POST', path, body });
    } catch (error) {
      // The apiserver, not the caller, failed: 503, so a client retries rather than gives up.
      throw new ApiError(
        'auth_unavailable',
        `cannot check the caller with the Kubernetes API: ${(error as Error).message.split('\n')[0]}`,
      );
    }
  }

  async function may(caller: Caller, attributes: AccessAttributes): Promise<boolean> {
    const { verb, resource, namespace, name } = attributes;
    const group = attributes.group ?? GROUP;
    const key = JSON.stringify([
      caller.username,
      caller.uid ?? '',
      caller.groups,
      verb,
      group,
      resource,
      namespace ?? '',
      name ?? '',
    ]);
    const cached = decisions.get(key);
    if (cached !== undefined) return cached;
    const answer = await review<{ status?: { allowed?: boolean } }>(ACCESS_REVIEWS, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: caller.username,
        groups: caller.groups,
        ...(caller.uid ? { uid: caller.uid } : {}),
        ...(caller.extra ? { extra: caller.extra } : {}),
        resourceAttributes: {
          ...(namespace ? { namespace } : {}),
          ...(name ? { name } : {}),
          verb,
          group,
          resource,
        },
      },
    });
    const allowed = answer.status?.allowed === true;
    decisions.set(key, allowed);
    return allowed;
  }

  return {
    async authenticate(token) {
      // Keyed by a digest: the cache never holds a token itself.
      const key = createHash('sha256').update(token).digest('hex');
      const cached = callers.get(key);
      if (cached) return cached;
      const answer = await review<{ status?: TokenReviewStatus }>(TOKEN_REVIEWS, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      });
      const status = answer.status ?? {};
      if (!status.authenticated || !status.user?.username)
        throw new ApiError('unauthenticated', 'the bearer token is not valid for this cluster');
      const caller: Caller = {
        username: status.user.username,
        groups: status.user.groups ?? [],
        ...(status.user.uid ? { uid: status.user.uid } : {}),
        ...(status.user.extra ? { extra: status.user.extra } : {}),
      };
      callers.set(key, caller);
      return caller;
    },
    may,
    mayList: (caller, namespace) =>
      may(caller, { verb: 'list', resource: ISSUERUN_PLURAL, namespace }),
  };
}

/**
 * The caller's token: `Authorization: Bearer`, or `X-Lorenz-Token` when the request came
 * through the apiserver's service proxy (the apiserver consumes the Authorization header it
 * authenticated the proxy request with, and passes other headers through).
 */
export function tokenOf(headers: Record<string, string | string[] | undefined>): string {
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && authorization.length > 0) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1])
      throw new ApiError('unauthenticated', 'the Authorization header is not `Bearer TOKEN`');
    return match[1];
  }
  const header = headers['x-lorenz-token'];
  if (typeof header === 'string' && header.trim().length > 0) return header.trim();
  throw new ApiError(
    'unauthenticated',
    'no bearer token: send Authorization: Bearer TOKEN (or X-Lorenz-Token through the service proxy)',
  );
}
