import {
  DECISION_WRITE_ATTEMPTS,
  planDecision,
  type DecisionInput,
  type DecisionPlan,
} from '../api/inbox-decisions.js';
import {
  isConflict,
  isNotFound,
  resourcePath,
  type KubeClient,
} from '../controller/runtime/client.js';
import { ISSUERUNS } from './cache.js';

/**
 * Writes a decision into an IssueRun's spec.decisions with `client` (the caller's own: the
 * apiserver's RBAC decides): read the run, plan the entry (api/inbox-decisions.ts), patch with
 * the resourceVersion read; on 409 (the run changed in between) read again, a few times.
 * `lorenz approve` and the web view's action both write through this. Undefined: no such run.
 */
export async function writeDecision(
  client: KubeClient,
  namespace: string,
  name: string,
  input: DecisionInput,
): Promise<DecisionPlan | undefined> {
  const path = resourcePath(ISSUERUNS, namespace, name);
  for (let attempt = 1; ; attempt += 1) {
    let run: unknown;
    try {
      run = await client.request({ path });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const plan = planDecision(run, input);
    try {
      await client.request({ method: 'PATCH', path, body: plan.patch });
      return plan;
    } catch (error) {
      if (!isConflict(error) || attempt >= DECISION_WRITE_ATTEMPTS) throw error;
    }
  }
}
