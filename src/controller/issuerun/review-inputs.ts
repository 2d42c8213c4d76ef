import { Reasons, type IssueRun } from '../../api/index.js';
import type { ReviewPromptContext } from '../../template/review-context.js';
import type { WorkflowConfig } from '../../workflow/config.js';
import type { ReviewConfig } from '../../workflow/review-config.js';
import { errorMessage, isLorenzError } from '../../workflow/errors.js';
import type { KubeClient } from '../runtime/client.js';
import { CONFIGMAPS, isNotFound, resourcePath } from '../runtime/client.js';
import { parseReviewContext, reviewContextName } from '../shared/review-context.js';
import { reviewConfigOf } from '../shared/review-config.js';
import type { V1ConfigMap } from '@kubernetes/client-node';

export type RoundInputs =
  | { ok: true; review: { config: ReviewConfig; context: ReviewPromptContext } }
  | { ok: false; final: boolean; reason: string; message: string };

/**
 * What an attempt of a review round renders its prompt from (docs/review-loop.md): every
 * attempt from the one the latest round started as (its retries too) works on that round's
 * feedback, read from `<run>-review-<round>`. Null for an attempt of no round.
 */
export async function roundInputs(
  client: KubeClient,
  run: IssueRun,
  attempt: number,
  config: WorkflowConfig,
): Promise<RoundInputs | null> {
  const review = run.status?.review;
  const round = review?.round ?? 0;
  const settings = reviewConfigOf(config);
  if (!settings || round === 0 || attempt < (review?.roundAttempt ?? Infinity)) return null;
  const name = reviewContextName(run.metadata.name ?? '', round);
  try {
    const configMap = await client.request<V1ConfigMap>({
      path: resourcePath(CONFIGMAPS, run.metadata.namespace, name),
    });
    return {
      ok: true,
      review: { config: settings, context: parseReviewContext(configMap) },
    };
  } catch (error) {
    if (isNotFound(error) || isLorenzError(error)) {
      const why = isNotFound(error) ? `ConfigMap ${name} is missing` : errorMessage(error);
      return {
        ok: false,
        final: true,
        reason: Reasons.InputsInvalid,
        message: `review round ${round}: ${why}`,
      };
    }
    throw error;
  }
}
