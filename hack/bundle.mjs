// Bundles the CLI (and with it the in-pod runner) into one ESM file: fast start-up for
// `lorenz run`, and a single file for the init container to copy into run Pods.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/lorenz.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: 'linked',
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __lorenzCreateRequire } from 'node:module'; const require = __lorenzCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
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
