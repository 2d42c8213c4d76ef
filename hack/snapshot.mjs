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

export async function buildSnapshot() {
  await build({
    entryPoints: ['src/cli/snapshot-entry.ts'],
    outfile: 'dist/snapshot-entry.cjs',
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    logLevel: 'warning',
    // ssh2's optional native add-ons (a CommonJS bundle has __dirname of its own).
    plugins: sshBundleOptions.plugins,
  });
  rmSync(`dist/${SNAPSHOT_BLOB}`, { force: true });
  rmSync(`dist/${SNAPSHOT_KEY}`, { force: true });
  // Without V8's code cache: the blob is 7 MB instead of 12, and deserializing the bigger
  // one cost as much as the compiling it saves (measured: `lorenz run` start no faster,
  // `workflow validate` within noise); a run Pod copies it, too.
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
