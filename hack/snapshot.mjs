// The V8 startup snapshot of the engine (src/cli/snapshot-entry.ts), run by hack/bundle.mjs:
// - dist/snapshot-entry.cjs: the entry as one CommonJS file (what --build-snapshot takes);
// - dist/lorenz.snapshot.blob: the heap after it ran, for `node --snapshot-blob`;
// - dist/lorenz.snapshot.key: `<node version> <machine>` and the path of the node that built
//   it: the blob loads in that node only, and the launcher checks the key before it tries;
// - dist/lorenz and dist/cli/lorenz: the launcher (hack/launcher.sh), beside each plain bundle.
import { build } from 'esbuild';
import { sshBundleOptions } from './bundle-native.mjs';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { machine } from 'node:os';
import { resolve } from 'node:path';

export const SNAPSHOT_BLOB = 'lorenz.snapshot.blob';
export const SNAPSHOT_KEY = 'lorenz.snapshot.key';

/**
 * `\uXXXX` for every character outside ASCII. esbuild escapes strings but leaves regular
 * expression literals as they are (liquidjs has `/[ẞ]/`), and a single such character makes
 * V8 keep the whole bundle's source as a two-byte string: twice the bytes in the heap, and
 * so in the blob every start reads and restores. Inside a string, a template, a regular
 * expression or a comment the escape means the same character (surrogate pairs too: in a
 * `u` pattern two escaped halves are one code point); outside them esbuild emits ASCII only.
 */
export function asciiOnly(source) {
  // After a backslash (`/\ẞ/`) the escape would be read as an escaped backslash instead.
  const escaped = /\\[\u0080-\uffff]/.exec(source);
  if (escaped) throw new Error(`snapshot entry: cannot escape ${escaped[0]} at ${escaped.index}`);
  return source.replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export async function buildSnapshot() {
  const bundled = await build({
    entryPoints: ['src/cli/snapshot-entry.ts'],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    logLevel: 'warning',
    // Minified: the blob holds the source (V8 compiles a function from it on its first call),
    // so each byte here is read and restored at every start, and scanned when compiled.
    // keepNames: libraries compare class names (ssh2: `constructor.name === 'Session'`, zod's
    // messages name the received type), which must not change with the snapshot. A stack
    // trace (LORENZ_DEBUG=1) names minified functions: LORENZ_SNAPSHOT=0 shows the plain one.
    minify: true,
    keepNames: true,
    write: false,
    // ssh2's optional native add-ons (a CommonJS bundle has __dirname of its own).
    plugins: sshBundleOptions.plugins,
  });
  const [output] = bundled.outputFiles;
  writeFileSync('dist/snapshot-entry.cjs', asciiOnly(output.text));
  rmSync(`dist/${SNAPSHOT_BLOB}`, { force: true });
  rmSync(`dist/${SNAPSHOT_KEY}`, { force: true });
  // Without V8's code cache: the blob is 5.4 MB instead of 10.8 (7 and 12 before minifying),
  // and deserializing the bigger one cost as much as the compiling it saves (measured again
  // minified: `lorenz run` start no faster, `workflow validate` +2 ms); a run Pod copies it.
  writeFileSync(
    'dist/snapshot-config.json',
    JSON.stringify({ builder: 'dist/snapshot-entry.cjs', withoutCodeCache: true }),
  );
  const built = spawnSync(
    process.execPath,
    [
      '--snapshot-blob',
      `dist/${SNAPSHOT_BLOB}`,
      '--build-snapshot-config',
      'dist/snapshot-config.json',
    ],
    // No LORENZ_* or locale of the build machine may reach the snapshot's heap.
    { stdio: 'inherit', env: { PATH: process.env.PATH ?? '', LANG: 'C' } },
  );
  if (built.status !== 0) throw new Error(`building the startup snapshot failed (${built.status})`);
  // `node --version` and `uname -m`, what the launcher compares when the node it runs is not
  // this very binary; then this binary's path, and the key's own: where both still are these
  // files, the launcher skips asking node its version (hack/launcher.sh).
  writeFileSync(
    `dist/${SNAPSHOT_KEY}`,
    `${process.version} ${machine()}\n${realpathSync(process.execPath)}\n${resolve(`dist/${SNAPSHOT_KEY}`)}\n`,
  );
  for (const dir of ['dist', 'dist/cli']) {
    copyFileSync('hack/launcher.sh', `${dir}/lorenz`);
    chmodSync(`${dir}/lorenz`, 0o755);
  }
  for (const file of [SNAPSHOT_BLOB, SNAPSHOT_KEY]) {
    rmSync(`dist/cli/${file}`, { force: true });
    symlinkSync(`../${file}`, `dist/cli/${file}`);
  }
}
