// Runs once before the integration tier: resolves (on a cold cache, builds) kube-apiserver,
// etcd, kubectl, kube-controller-manager and helm, so each test file finds them at once.
import { ensureTools } from '../../hack/cluster/control-plane.js';

export default async function setup(): Promise<void> {
  const started = Date.now();
  const tools = await ensureTools();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `[integration] control-plane binaries ready in ${seconds}s (${tools.binDir})\n`,
  );
}
