import { execFileSync } from 'node:child_process';

// CLI and bridge tests run the real bundles (dist/lorenz.js, dist/scripted-agent.mjs) as
// subprocesses, the way users and run Pods do; bundling takes about a second.
export default function setup(): void {
  execFileSync(process.execPath, ['hack/bundle.mjs'], { stdio: 'inherit' });
}
