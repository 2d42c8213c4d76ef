// Runs once before the integration tier: resolves (on a cold cache, builds) kube-apiserver,
// etcd, kubectl, kube-controller-manager and helm, so each test file finds them at once; and
// bundles the runner and the scripted agent (the operator image's files) once for every
// operator environment of the tier, instead of once per file.
import type { TestProject } from 'vitest/node';
import { ensureTools } from '../../hack/cluster/control-plane.js';
import { buildOperatorBundles } from './operator-harness.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The runner bundle and the scripted agent, readable by run Pods (uid 65532). */
    operatorBundles: { runner: string; scriptedAgent: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const tools = await ensureTools();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `[integration] control-plane binaries ready in ${seconds}s (${tools.binDir})\n`,
  );
  const bundles = await buildOperatorBundles();
  project.provide('operatorBundles', {
    runner: bundles.runner,
    scriptedAgent: bundles.scriptedAgent,
  });
  return () => bundles.remove();
}
