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
        build.onLoad({ filter: /.*/, namespace: 'absent-native-addon' }, (args) => ({
          contents: `throw new Error(${JSON.stringify(`${args.path} is not bundled`)});`,
          loader: 'js',
        }));
      },
    },
  ],
};
