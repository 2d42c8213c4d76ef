// Run Pods run as uid 65532 and must reach Node 24 whatever the checkout's parent folders
// allow (a clone in a 0700 mktemp folder, say): it is linked (or copied) into a folder of
// its own under the temp dir, which the integration tests and the chaos suite put on PATH.
import { chmod, copyFile, link, mkdir, realpath, rename, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const POD_NODE_DIR = join(tmpdir(), `lorenz-it-node-${process.getuid?.() ?? 0}`);

/** Makes `POD_NODE_DIR/node` the repository's Node 24, readable and runnable by anyone. */
export async function providePodNode(repoRoot: string): Promise<string> {
  const source = await realpath(join(repoRoot, 'node_modules', 'node', 'bin', 'node'));
  const target = join(POD_NODE_DIR, 'node');
  await mkdir(POD_NODE_DIR, { recursive: true });
  await chmod(POD_NODE_DIR, 0o755);
  const [wanted, present] = await Promise.all([stat(source), stat(target).catch(() => undefined)]);
  if (present && present.size === wanted.size && present.mtimeMs >= wanted.mtimeMs) return target;
  const temporary = `${target}.${process.pid}`;
  await link(source, temporary).catch(async () => {
    await copyFile(source, temporary);
    await chmod(temporary, 0o755);
  });
  await rename(temporary, target);
  return target;
}
