// What every bundle of the CLI needs for ssh2 (SSH workers) and pg (the PostgreSQL archive),
// shared by hack/bundle.mjs and the image test that rebuilds the runner bundle:
// - ssh2 probes optional native speed-ups (cpu-features, its own sshcrypto.node) inside
//   try/catch and falls back to Node's crypto without them. A bundle cannot hold a .node
//   file, so both resolve to a module that throws, which the probe catches: the bundle
//   behaves the same with or without node_modules.
// - its poly1305 (asm.js from emscripten) reads __dirname, which ES modules lack.
// - pg (the archive's PostgreSQL client) requires pg-native, libpq bindings, only when asked
//   for pg.native, which Lorenz never does: it resolves to the same throwing module, so a
//   pg-native installed beside the bundle is never loaded either.
// - @kubernetes/client-node imports undici for its fetch-based API clients; Lorenz uses only
//   its KubeConfig (loading, applyToHTTPSOptions) and talks to the apiserver over node:https.
//   Importing undici compiles its WebAssembly HTTP parser at once: about 21 MiB of the
//   controller's resident memory for code it never runs. It resolves to a module whose
//   Agent, ProxyAgent and fetch throw, saying so, should anything ever call them.
const UNUSED_UNDICI = `
const unused = (what) => {
  throw new Error(what + ': undici is left out of the Lorenz bundle (client-node\\'s fetch clients are not used)');
};
export class Agent { constructor() { unused('undici.Agent'); } }
export class ProxyAgent { constructor() { unused('undici.ProxyAgent'); } }
export const fetch = () => unused('undici.fetch');
`;

export const sshBundleOptions = {
  define: { __dirname: 'import.meta.dirname' },
  plugins: [
    {
      name: 'absent-native-addons',
      setup(build) {
        build.onResolve({ filter: /^cpu-features$|^pg-native$|\.node$/ }, (args) => ({
          path: args.path,
          namespace: 'absent-native-addon',
        }));
        build.onResolve({ filter: /^undici$/ }, (args) => ({
          path: args.path,
          namespace: 'unused-undici',
        }));
        build.onLoad({ filter: /.*/, namespace: 'unused-undici' }, () => ({
          contents: UNUSED_UNDICI,
          loader: 'js',
        }));
        build.onLoad({ filter: /.*/, namespace: 'absent-native-addon' }, (args) => ({
          contents: `throw new Error(${JSON.stringify(`${args.path} is not bundled`)});`,
          loader: 'js',
        }));
      },
    },
  ],
};
