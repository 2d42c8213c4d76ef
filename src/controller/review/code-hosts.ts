import type { Workflow } from '../../api/index.js';
import { sha256Hex } from '../../api/run-pod.js';
import { createCodeHost } from '../../codehost/index.js';
import {
  resolveCodeHost,
  tokenFromCredential,
  type ResolvedCodeHost,
} from '../../codehost/resolve.js';
import type { CodeHost, CodeHostOptions } from '../../codehost/types.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import { LorenzError } from '../../workflow/errors.js';
import type { ReviewConfig } from '../../workflow/review-config.js';
import { resolveRemote } from '../../workspace/git/index.js';
import type { KubeClient } from '../runtime/client.js';
import { SECRETS, isNotFound, resourcePath } from '../runtime/client.js';

/**
 * The code host of a Workflow's review loop (docs/review-loop.md): which host, API and
 * repository the clone address names, and the token, read by the controller from
 * spec.review.credentialsSecretRef or else from the git credentials Secret's entry for the
 * host. The token never leaves the controller: no run Pod, status, Event or log gets it.
 */
const invalid = (message: string) => new LorenzError('invalid_codehost_config', message);

// The first line only, as the run Pods' git credential helper reads a credentials file: the
// controller then talks to the code host with the very token the Pods push with.
const decode = (value: string | undefined): string | undefined =>
  value === undefined
    ? undefined
    : (Buffer.from(value, 'base64').toString('utf8').trim().split(/\r?\n/)[0] ?? '').trim();

/** Where the clone address points, the API root for it, and the credentials key of its host. */
export type CodeHostTarget = ResolvedCodeHost;

/** Where the Workflow's clone address points (src/codehost/resolve.ts). */
export function codeHostTarget(config: WorkflowConfig, review: ReviewConfig): CodeHostTarget {
  if (!config.workspace.git) throw invalid('review: needs workspace.git');
  return resolveCodeHost(review, resolveRemote(config.workspace.git).url);
}

/** The token for the host, from the Workflow's Secrets; what is missing is named, never shown. */
export async function codeHostToken(
  client: KubeClient,
  workflow: Workflow,
  host: string,
): Promise<string> {
  const own = workflow.spec.review?.credentialsSecretRef;
  const git = workflow.spec.git?.credentialsSecretRef;
  const ref = own ?? git;
  if (!ref) {
    throw invalid(
      'no code host token: set spec.review.credentialsSecretRef or spec.git.credentialsSecretRef',
    );
  }
  let data: Record<string, string>;
  try {
    data =
      (
        await client.request<{ data?: Record<string, string> }>({
          path: resourcePath(SECRETS, workflow.metadata.namespace, ref.name),
        })
      ).data ?? {};
  } catch (error) {
    if (isNotFound(error)) throw invalid(`Secret ${ref.name} not found`);
    throw error;
  }
  const keys = own ? [own.key ?? 'token'] : [...new Set([host, host.replace(/:\d+$/, '')])];
  const key = keys.find((candidate) => data[candidate] !== undefined);
  const value = key === undefined ? undefined : decode(data[key]);
  if (!value) {
    throw invalid(
      `Secret ${ref.name} has no key ${keys.map((k) => JSON.stringify(k)).join(' or ')}`,
    );
  }
  return tokenFromCredential(value);
}

/**
 * One code host per Workflow, kept while its target and token stay the same: hosts remember
 * ETags between calls, so an idle pull request costs no rate limit.
 */
export function createCodeHostCache(
  client: KubeClient,
  make: (options: CodeHostOptions) => CodeHost = createCodeHost,
) {
  const entries = new Map<string, { fingerprint: string; host: CodeHost }>();
  return async function codeHost(
    workflow: Workflow,
    config: WorkflowConfig,
    review: ReviewConfig,
  ): Promise<CodeHost> {
    const target = codeHostTarget(config, review);
    const token = await codeHostToken(client, workflow, target.host);
    const key = `${workflow.metadata.namespace}/${workflow.metadata.name}`;
    const fingerprint = sha256Hex(JSON.stringify([target, token]));
    const known = entries.get(key);
    if (known?.fingerprint === fingerprint) return known.host;
    const { host: _host, ...where } = target;
    const host = make({ ...where, token });
    entries.set(key, { fingerprint, host });
    return host;
  };
}
