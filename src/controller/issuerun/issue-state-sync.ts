import type { Logger } from 'pino';
import type { IssueRun } from '../../api/index.js';
import { errorMessage } from '../../workflow/errors.js';
import { PODS, resourcePath, type KubeClient } from '../runtime/client.js';
import { ANNOTATION_ISSUE_STATE } from '../shared/constants.js';
import type { PodObject } from '../shared/resources.js';
import { isLive } from './attempts.js';

/**
 * Keeps each live Pod's issue-state annotation in step with spec.issue.state: the runner
 * reads it through the downward API, and a state that is no longer active ends its turn
 * loop. A Pod that cannot be patched is logged and tried again on the next reconcile.
 */
export async function syncIssueState(
  client: KubeClient,
  run: IssueRun,
  pods: readonly PodObject[],
  logger?: Logger,
): Promise<void> {
  const state = run.spec.issue.state ?? '';
  for (const pod of pods) {
    if (pod.metadata?.deletionTimestamp || !isLive(pod)) continue;
    if (pod.metadata?.annotations?.[ANNOTATION_ISSUE_STATE] === state) continue;
    try {
      await client.request({
        method: 'PATCH',
        path: resourcePath(PODS, pod.metadata?.namespace, pod.metadata?.name),
        patchType: 'merge',
        body: { metadata: { annotations: { [ANNOTATION_ISSUE_STATE]: state } } },
      });
    } catch (error) {
      logger?.warn(
        { err: errorMessage(error), pod: pod.metadata?.name },
        'cannot update the issue state',
      );
    }
  }
}
