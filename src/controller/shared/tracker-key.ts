import type { Workflow } from '../../api/index.js';
import { LorenzError } from '../../workflow/errors.js';
import type { KubeClient } from '../runtime/client.js';
import { SECRETS, isNotFound, resourcePath } from '../runtime/client.js';

/** The API key in the Secret the Workflow names, if it names one. */
export async function trackerKey(
  client: KubeClient,
  workflow: Workflow,
): Promise<string | undefined> {
  const ref = workflow.spec.trackerSecretRef;
  if (!ref) return undefined;
  const key = ref.key ?? 'api_key';
  const where = `Secret ${ref.name} (spec.trackerSecretRef)`;
  let secret: { data?: Record<string, string> };
  try {
    secret = await client.request({
      path: resourcePath(SECRETS, workflow.metadata.namespace, ref.name),
    });
  } catch (error) {
    if (isNotFound(error)) throw new LorenzError('missing_tracker_secret', `${where} not found`);
    throw error;
  }
  const encoded = secret.data?.[key];
  const value = encoded === undefined ? '' : Buffer.from(encoded, 'base64').toString('utf8').trim();
  if (!value) throw new LorenzError('missing_tracker_secret', `${where} has no key ${key}`);
  return value;
}
