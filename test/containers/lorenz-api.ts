// The lorenz.dev objects of one namespace as the real-node cases (real-node-controller.ts,
// snapshot-start.ts, warm-start.ts) and the benchmarks on a node (bench/pod-start.ts,
// bench/warm-start.ts) handle them through an admin client: Workflows and IssueRuns created,
// read, and an IssueRun waited for until it is Finished.
import type { IssueRun, Workflow } from '../../src/api/index.js';
import type { KubeClient } from '../../src/controller/runtime/client.js';
import { issueRunManifest, until } from '../integration/operator-harness.js';

/** The run's Finished condition is True: it ended, whatever its phase. */
export const isFinished = (run: IssueRun): boolean =>
  run.status?.conditions?.some((c) => c.type === 'Finished' && c.status === 'True') ?? false;

/**
 * The lorenz.dev API of `namespace` through `admin()` (a getter: the client is usually made
 * in a beforeAll, after this is set up).
 */
export function lorenzApi(admin: () => KubeClient, namespace: string) {
  const api = `/apis/lorenz.dev/v1alpha1/namespaces/${namespace}`;
  const getRun = (name: string) => admin().request<IssueRun>({ path: `${api}/issueruns/${name}` });
  return {
    getRun,
    getWorkflow: (name: string) => admin().request<Workflow>({ path: `${api}/workflows/${name}` }),
    /** Creates Workflow `name` with this spec. */
    createWorkflow: async (name: string, spec: object): Promise<void> => {
      await admin().request({
        method: 'POST',
        path: `${api}/workflows`,
        body: { apiVersion: 'lorenz.dev/v1alpha1', kind: 'Workflow', metadata: { name }, spec },
      });
    },
    /** Creates IssueRun `name` of `workflow`, its issue NAME titled `name`, `spec` added. */
    createRun: async (name: string, workflow: string, spec: object = {}): Promise<void> => {
      await admin().request({
        method: 'POST',
        path: `${api}/issueruns`,
        body: issueRunManifest(
          name,
          workflow,
          { identifier: name.toUpperCase(), title: name },
          spec,
        ),
      });
    },
    /** IssueRun `name` once it is Finished; fails after `ms`. */
    finished: (name: string, ms: number): Promise<IssueRun> =>
      until(
        `IssueRun ${name} to finish`,
        async () => {
          const run = await getRun(name);
          return isFinished(run) ? run : undefined;
        },
        ms,
      ),
  };
}
