import type { IssueRun, Workflow } from '../../api/index.js';
import { createRedactor, MIN_SECRET_LENGTH, type Redactor } from '../../runner/redact.js';
import type { KubeClient } from '../runtime/client.js';
import { SECRETS, isNotFound, resourcePath } from '../runtime/client.js';
import type { PodObject } from '../shared/resources.js';

/**
 * The values the archive must never hold: those of every Secret a run references, the same
 * ones its runner masks (what its Pods take from Secrets: the tools token, the tracker key,
 * the Pod template's Secrets) plus the Workflow's tracker key and git credentials (mounted
 * as files, so not in the Pod's environment).
 */
export interface SecretRef {
  name: string;
  /** One key; every key of the Secret when absent. */
  key?: string;
}

/** The Secrets one run references: its Pods' environment and its Workflow's references. */
export function secretRefs(
  pods: readonly PodObject[],
  workflow: Workflow | undefined,
): SecretRef[] {
  const refs: SecretRef[] = [];
  for (const pod of pods) {
    const containers = [...(pod.spec?.initContainers ?? []), ...(pod.spec?.containers ?? [])];
    for (const container of containers) {
      for (const variable of container.env ?? []) {
        const ref = variable.valueFrom?.secretKeyRef;
        if (ref?.name) refs.push({ name: ref.name, key: ref.key });
      }
      for (const source of container.envFrom ?? []) {
        if (source.secretRef?.name) refs.push({ name: source.secretRef.name });
      }
    }
    for (const volume of pod.spec?.volumes ?? []) {
      if (volume.secret?.secretName) refs.push({ name: volume.secret.secretName });
    }
  }
  const tracker = workflow?.spec.trackerSecretRef;
  if (tracker) refs.push({ name: tracker.name, key: tracker.key ?? 'api_key' });
  const git = workflow?.spec.git?.credentialsSecretRef;
  if (git) refs.push({ name: git.name });
  return refs;
}

/** The forms of one value that may show: as is, trimmed, and a `user:token`'s token. */
export function secretForms(value: string): string[] {
  const forms = new Set<string>();
  for (const line of [value, ...value.split('\n')]) {
    const trimmed = line.trim();
    forms.add(line);
    forms.add(trimmed);
    const colon = trimmed.indexOf(':');
    if (colon > 0) forms.add(trimmed.slice(colon + 1));
  }
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH);
}

/** The values of those Secret keys; a Secret already gone (a revoked token) gives none. */
export async function readSecretValues(
  client: KubeClient,
  namespace: string,
  refs: readonly SecretRef[],
): Promise<string[]> {
  const byName = new Map<string, Set<string> | 'all'>();
  for (const ref of refs) {
    const keys = byName.get(ref.name);
    if (keys === 'all') continue;
    if (ref.key === undefined) byName.set(ref.name, 'all');
    else byName.set(ref.name, (keys ?? new Set()).add(ref.key));
  }
  const values: string[] = [];
  for (const [name, keys] of byName) {
    let secret: { data?: Record<string, string> };
    try {
      secret = await client.request({ path: resourcePath(SECRETS, namespace, name) });
    } catch (error) {
      if (isNotFound(error)) continue;
      throw error;
    }
    for (const [key, encoded] of Object.entries(secret.data ?? {})) {
      if (keys !== 'all' && !keys.has(key)) continue;
      values.push(...secretForms(Buffer.from(encoded, 'base64').toString('utf8')));
    }
  }
  return values;
}

/**
 * Per run: the secret values seen so far (a token Secret deleted when the run finished was
 * read while it ran), read again only when the run references a Secret not read yet.
 */
export function createRunRedactors(client: KubeClient) {
  const runs = new Map<string, { read: Set<string>; values: Set<string>; redactor: Redactor }>();
  return {
    async redactorFor(
      run: IssueRun,
      pods: readonly PodObject[],
      workflow: Workflow | undefined,
    ): Promise<Redactor> {
      const uid = run.metadata.uid ?? '';
      let entry = runs.get(uid);
      if (!entry) {
        entry = { read: new Set(), values: new Set(), redactor: createRedactor([]) };
        runs.set(uid, entry);
      }
      const refs = secretRefs(pods, workflow);
      const fresh = refs.filter((ref) => !entry.read.has(`${ref.name}/${ref.key ?? '*'}`));
      if (fresh.length > 0) {
        const values = await readSecretValues(client, run.metadata.namespace ?? '', fresh);
        for (const ref of fresh) entry.read.add(`${ref.name}/${ref.key ?? '*'}`);
        for (const value of values) entry.values.add(value);
        entry.redactor = createRedactor([...entry.values]);
      }
      return entry.redactor;
    },
    /** The run's redactor as it stands (no lookups): for the log pieces, written as they come. */
    cached(uid: string): Redactor | undefined {
      return runs.get(uid)?.redactor;
    },
    forget(uid: string): void {
      runs.delete(uid);
    },
  };
}
