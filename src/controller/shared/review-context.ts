import type { V1ConfigMap } from '@kubernetes/client-node';
import type { IssueRun } from '../../api/index.js';
import type { ReviewPromptContext } from '../../template/review-context.js';
import { LorenzError } from '../../workflow/errors.js';
import { LABEL_COMPONENT, LABEL_ISSUERUN, LABEL_MANAGED_BY, MANAGED_BY } from './constants.js';
import { boundedName, labelValue } from './object-names.js';
import { issueRunOwnerReference } from './owner.js';

/**
 * The feedback of a review round (docs/review-loop.md), kept in an immutable ConfigMap
 * `<run>-review-<round>` owned by the run: the review controller writes it before it asks
 * for the round, and the round's attempts render their prompt from it, so a restart (or a
 * retry of the round) renders the same feedback the round was asked for.
 */
export const REVIEW_CONTEXT_KEY = 'context.json';

export const reviewContextName = (run: string, round: number): string =>
  boundedName(run, `-review-${round}`, 253);

export function reviewContextConfigMap(
  run: IssueRun,
  round: number,
  context: ReviewPromptContext,
): V1ConfigMap {
  const name = run.metadata.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: reviewContextName(name, round),
      namespace: run.metadata.namespace ?? '',
      labels: {
        [LABEL_MANAGED_BY]: MANAGED_BY,
        [LABEL_COMPONENT]: 'review-round',
        [LABEL_ISSUERUN]: labelValue(name),
      },
      ownerReferences: [
        issueRunOwnerReference({
          name,
          namespace: run.metadata.namespace ?? '',
          uid: run.metadata.uid ?? '',
        }),
      ],
    },
    immutable: true,
    data: { [REVIEW_CONTEXT_KEY]: `${JSON.stringify(context, null, 2)}\n` },
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The context a round's ConfigMap holds; throws `template_render_error` when it holds none. */
export function parseReviewContext(configMap: V1ConfigMap): ReviewPromptContext {
  const text = configMap.data?.[REVIEW_CONTEXT_KEY];
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isRecord(parsed) || !isRecord(parsed.review) || !isRecord(parsed.checks)) {
    throw new LorenzError(
      'template_render_error',
      `ConfigMap ${configMap.metadata?.name ?? ''} holds no review context (${REVIEW_CONTEXT_KEY})`,
    );
  }
  // Written by this controller from a shape it checked (decide.ts); read back as that shape.
  return parsed as unknown as ReviewPromptContext;
}
