// Two builds of the same CLI:
// - dist/lorenz.js: ONE self-contained file. The operator image ships it at /lorenz/lorenz.js
//   and the run Pod's init container copies that single file in (`lorenz runner`).
// - dist/cli/lorenz.js (the package's bin): split into chunks so that `lorenz run` loads
//   only the engine, never the Kubernetes client: start-up is what is left to win over
//   the login shells of four hooks.
import { build } from 'esbuild';
import { sshBundleOptions } from './bundle-native.mjs';
import { buildSnapshot } from './snapshot.mjs';

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  banner: {
    // The flags of RUNNER_NODE_FLAGS (src/api/run-pod.ts): a small young generation keeps a
    // hook that prints megabytes from growing the heap.
    js: "#!/usr/bin/env -S node --max-semi-space-size=1\nimport { createRequire as __lorenzCreateRequire } from 'node:module'; const require = __lorenzCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
  ...sshBundleOptions,
};

await build({ ...common, entryPoints: ['src/cli.ts'], outfile: 'dist/lorenz.js' });

await build({
  ...common,
  entryPoints: { lorenz: 'src/cli.ts' },
  outdir: 'dist/cli',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  // V8's on-disk code cache (Node ≥ 22.1) saves ~20 ms of compiling per start.
  banner: {
    js: `${common.banner.js}\nimport * as __lorenzModule from 'node:module'; try { __lorenzModule.enableCompileCache?.(); } catch {}`,
  },
  // The banner's `require` shim is needed by bundled CommonJS, in the entry and in chunks.
});

// The scripted ACP agent: a bridge command for demos and samples that needs no API key.
await build({
  entryPoints: ['test/fixtures/scripted-agent/main.ts'],
  outfile: 'dist/scripted-agent.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  logLevel: 'warning',
});

// The startup snapshot of the engine and its launcher (hack/snapshot.mjs).
await buildSnapshot();
