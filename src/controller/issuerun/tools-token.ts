import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import type { IssueRun } from '../../api/index.js';
import { TOOLS_TOKEN_KEY, sha256Hex } from '../../api/run-pod.js';
import type { KubeClient } from '../runtime/client.js';
import { SECRETS, isConflict, isNotFound, resourcePath } from '../runtime/client.js';
import {
  ANNOTATION_TOKEN_SHA256,
  COMPONENT_TOOLS_TOKEN,
  LABEL_COMPONENT,
  LABEL_ISSUERUN,
  LABEL_MANAGED_BY,
  MANAGED_BY,
} from '../shared/constants.js';
import { labelValue, toolsTokenSecretName } from '../shared/object-names.js';
import { issueRunOwnerReference, type ObjectIdentity } from '../shared/owner.js';

/** The version tag of the token format: the gateway refuses any other. */
export const TOOLS_TOKEN_PREFIX = 'lzt1';
/** Random bytes in a token: 256 bits, beyond guessing. */
export const TOOLS_TOKEN_SECRET_BYTES = 32;

/**
 * A fresh bearer token for one attempt of a run: `lzt1.<namespace>.<run>.<attempt>.<secret>`.
 * The clear part tells the gateway which run to look up (and so which Secret's hash to
 * compare with) without a table of its own; the secret part is what proves the caller.
 */
export function mintToolsToken(
  namespace: string,
  run: string,
  attempt: number,
  random: (size: number) => Buffer = randomBytes,
): string {
  const secret = random(TOOLS_TOKEN_SECRET_BYTES).toString('base64url');
  return [TOOLS_TOKEN_PREFIX, namespace, run, String(attempt), secret].join('.');
}

/**
 * The token Secret of an attempt, owned by the run so that it goes with it. The hash rides
 * in an annotation: the gateway verifies against it and never needs the value back.
 */
export function toolsTokenSecret(options: {
  run: ObjectIdentity;
  attempt: number;
  token: string;
}): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: toolsTokenSecretName(options.run.name, options.attempt),
      namespace: options.run.namespace,
      labels: {
        [LABEL_MANAGED_BY]: MANAGED_BY,
        [LABEL_COMPONENT]: COMPONENT_TOOLS_TOKEN,
        [LABEL_ISSUERUN]: labelValue(options.run.name),
      },
      annotations: { [ANNOTATION_TOKEN_SHA256]: sha256Hex(options.token) },
      ownerReferences: [issueRunOwnerReference(options.run)],
    },
    immutable: true,
    data: { [TOOLS_TOKEN_KEY]: Buffer.from(options.token).toString('base64') },
  };
}

/** The attempts a run may have made a token for: its first through its highest. */
function attemptsOf(run: IssueRun): number[] {
  const first = run.spec.attempt ?? 1;
  const last = Math.max(first, run.status?.attempt ?? first);
  return Array.from({ length: last - first + 1 }, (_, index) => first + index);
}

/**
 * Revocation of a finished run's tokens: its token Secrets are deleted. Only the run's own:
 * an object squatting on the name (never mounted: the create refused it) is left alone, and
 * the delete is pinned to the uid read, so it cannot hit one made in between. Remembered per
 * run uid, so the resyncs of a finished run do not repeat the work; a restarted controller
 * looks once more, which finds nothing.
 */
export function createTokenRevoker(client: KubeClient) {
  const revoked = new Set<string>();

  async function deleteOwned(namespace: string, name: string, owner: string): Promise<void> {
    const path = resourcePath(SECRETS, namespace, name);
    try {
      const secret = await client.request<V1Secret>({ path });
      const ours = (secret.metadata?.ownerReferences ?? []).some(
        (reference) => reference.uid === owner && reference.controller === true,
      );
      if (!ours) return;
      await client.request({
        method: 'DELETE',
        path,
        body: { preconditions: { uid: secret.metadata?.uid } },
      });
    } catch (error) {
      // Gone already, or replaced by another object since the read (the uid precondition).
      if (!isNotFound(error) && !isConflict(error)) throw error;
    }
  }

  return {
    async revoke(run: IssueRun): Promise<void> {
      const uid = run.metadata.uid ?? '';
      if (revoked.has(uid)) return;
      const namespace = run.metadata.namespace ?? '';
      const name = run.metadata.name ?? '';
      await Promise.all(
        attemptsOf(run).map((attempt) =>
          deleteOwned(namespace, toolsTokenSecretName(name, attempt), uid),
        ),
      );
      revoked.add(uid);
    },
    /** The run object is gone: nothing of it to remember. */
    forget(uid: string): void {
      revoked.delete(uid);
    },
  };
}
export type TokenRevoker = ReturnType<typeof createTokenRevoker>;
