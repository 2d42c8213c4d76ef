// Writes crds/*.yaml and config/rbac/*.yaml from src/api and the controller's RBAC rules.
// `--check` writes nothing and exits 1 naming every stale or missing file (for CI).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from './manifests.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return '';
  }
}

const stale: string[] = [];
for (const file of generatedFiles()) {
  const target = join(root, file.path);
  if ((await readOrEmpty(target)) === file.content) continue;
  if (check) {
    stale.push(file.path);
    continue;
  }
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, file.content);
  console.log(`wrote ${file.path}`);
}
if (stale.length > 0) {
  console.error(`stale generated files (run npm run crds): ${stale.join(', ')}`);
  process.exit(1);
}
