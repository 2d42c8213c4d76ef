// The newcomer's path on a real apiserver and the process-backed node: `helm install` the
// chart, run the controller as the chart's ServiceAccount (impersonated, so the chart's RBAC
// is what it gets), apply config/samples, and see issuerun/demo-1 Succeed with a
// HookSucceeded Event for each of the four hooks.
//
// The controller runs in-process in place of the chart's Deployment (nothing here runs
// images). The process node runs "images" from the host filesystem, with the operator
// image's /lorenz/lorenz.js mapped to a bundle of src/cli.ts and the samples' Node image
// given the project's Node 24.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { esbuildBundle, operatorImageFiles } from '../support/operator-build.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  installCrds,
  startControlPlane,
  type ControlPlane,
} from '../../hack/cluster/control-plane.js';
import { startProcessNode, type ProcessNode } from '../../hack/process-node/index.js';
import { DEFAULT_OPERATOR_IMAGE } from '../../src/controller/shared/constants.js';
import { startController, type RunningController } from '../../src/controller/main.js';
import { createLogger } from '../../src/controller/runtime/logger.js';
import { buildScriptedAgent } from '../fixtures/scripted-agent/build.js';
import { impersonating } from './operator-harness.js';

const exec = promisify(execFile);
const root = join(import.meta.dirname, '..', '..');
const RELEASE_NAMESPACE = 'lorenz-system';
const SAMPLE_AGENT_IMAGE = 'node:24.21.0-bookworm-slim';
const HOOKS = ['after_create', 'before_run', 'after_run', 'before_remove'];

let cp: ControlPlane;
let node: ProcessNode | undefined;
let controller: RunningController | undefined;
let scratch: string;
let scriptedAgent: string;

const kubectl = async (...args: string[]) =>
  (await exec(cp.tools.kubectl, ['--kubeconfig', cp.kubeconfigPath, ...args])).stdout;
/** `kubectl get` of one object in default, printing the JSONPath `template`. */
const getField = (resource: string, name: string, template: string) =>
  kubectl('-n', 'default', 'get', resource, name, '-o', `jsonpath=${template}`);
/** The messages of the Events in default that `fieldSelector` picks, one a line. */
const eventMessages = (fieldSelector: string) =>
  kubectl(
    '-n',
    'default',
    'get',
    'events',
    '--field-selector',
    fieldSelector,
    '-o',
    'jsonpath={range .items[*]}{.message}{"\\n"}{end}',
  );

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'lorenz-chart-samples-'));
  // Run Pods run as uid 65532: what they read from the host must be readable by others.
  await chmod(scratch, 0o755);
  const runner = join(scratch, 'lorenz.js');
  // ssh2 (SSH workers) bundles without its native add-ons, as in the image.
  await esbuildBundle(join(root, 'src/cli.ts'), runner);
  scriptedAgent = await buildScriptedAgent();
  await chmod(dirname(scriptedAgent), 0o755);

  cp = await startControlPlane({ controllers: [] });
  await installCrds(cp, [
    join(root, 'charts/lorenz/crds/lorenz.dev_workflows.yaml'),
    join(root, 'charts/lorenz/crds/lorenz.dev_issueruns.yaml'),
  ]);
  // No serviceaccount controller runs here: ServiceAccount admission needs the default one.
  await kubectl('-n', 'default', 'create', 'serviceaccount', 'default');
  node = await startProcessNode({
    controlPlane: cp,
    imageMap: {
      [DEFAULT_OPERATOR_IMAGE]: operatorImageFiles(runner, scriptedAgent, root),
      [SAMPLE_AGENT_IMAGE]: {
        '/usr/bin/node': await realpath(join(root, 'node_modules/.bin/node')),
      },
    },
  });
});

afterAll(async () => {
  await controller?.stop();
  await node?.stop();
  await cp?.stop();
  if (scriptedAgent) await rm(dirname(scriptedAgent), { recursive: true, force: true });
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('helm install, then the samples', () => {
  it('installs the chart for real', async () => {
    const { stdout } = await exec(cp.tools.helm, [
      '--kubeconfig',
      cp.kubeconfigPath,
      'install',
      'lorenz',
      join(root, 'charts/lorenz'),
      '--namespace',
      RELEASE_NAMESPACE,
      '--create-namespace',
    ]);
    expect(stdout).toContain('STATUS: deployed');
  });

  it("runs issuerun/demo-1 to Succeeded with the chart's RBAC, an Event for each hook", async () => {
    controller = await startController({
      kubeConfig: impersonating(cp, `system:serviceaccount:${RELEASE_NAMESPACE}:lorenz`),
      handleSignals: false,
      identity: 'chart-samples',
      operatorImage: DEFAULT_OPERATOR_IMAGE,
      // The board sample's agents reach the tools gateway on this machine.
      toolsBindAddress: '127.0.0.1:0',
      logger: createLogger({ level: process.env.LORENZ_IT_LOG ?? 'silent' }),
    });
    // config/samples as shipped: the bridge is /lorenz-bin/scripted-agent.mjs, which the init
    // container copies from the operator image (mapped above) into the run Pod.
    await kubectl('-n', 'default', 'apply', '--server-side', '-k', join(root, 'config/samples'));
    await kubectl(
      '-n',
      'default',
      'wait',
      '--for=condition=Finished',
      'issuerun/demo-1',
      '--timeout=90s',
    );

    const succeeded = await getField(
      'issuerun',
      'demo-1',
      '{.status.conditions[?(@.type=="Succeeded")].status}',
    );
    expect(succeeded, await kubectl('-n', 'default', 'describe', 'issuerun', 'demo-1')).toBe(
      'True',
    );
    const events = await eventMessages(
      'involvedObject.kind=IssueRun,involvedObject.name=demo-1,reason=HookSucceeded',
    );
    for (const hook of HOOKS) expect(events).toMatch(new RegExp(`^${hook} completed`, 'm'));
    const afterRun = await getField(
      'issuerun',
      'demo-1',
      '{.status.hooks[?(@.name=="after_run")].output}',
    );
    // after_run prints what the scripted agent wrote, following the sample's prompt.
    expect(afterRun).toContain('Read the issue DEMO-1 and wrote this note.');
  });

  it('works the board sample through: both open issues moved to Done by their agents', async () => {
    // BOARD-1 first (BOARD-2 is blocked by it); each agent comments and moves its issue to
    // Done through the tools gateway; then the tracker has nothing left to do.
    const deadline = Date.now() + 100_000;
    let candidates = '';
    while (Date.now() < deadline) {
      candidates = await getField('workflows.lorenz.dev', 'board', '{.status.dispatch.candidates}');
      if (candidates === '0') break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(
      candidates,
      await kubectl('-n', 'default', 'describe', 'workflows.lorenz.dev', 'board'),
    ).toBe('0');
    const calls = await eventMessages('reason=ToolCalled');
    expect(calls).toMatch(/^tracker_update_state on BOARD-1 .*: ok$/m);
    expect(calls).toMatch(/^tracker_update_state on BOARD-2 .*: ok$/m);
  });
});
