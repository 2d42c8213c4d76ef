// Copies crds/*.yaml into the Helm chart and config/crd, and renders the chart's RBAC rules
// from src/controller/runtime/rbac.ts (see hack/sync-chart-plan.ts).
//   hack/run-ts.sh hack/sync-chart.ts           write what is stale
//   hack/run-ts.sh hack/sync-chart.ts --check   write nothing; exit 1 naming stale files
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { planSync, staleFiles } from './sync-chart-plan.js';

const root = process.cwd();
const check = process.argv.includes('--check');
const plan = await planSync(root);
const stale = await staleFiles(root, plan);
if (check) {
  if (stale.length > 0) {
    console.error(`stale chart/config copies (run make crds): ${stale.join(', ')}`);
    process.exit(1);
  }
} else {
  for (const file of plan.files) {
    if (!stale.includes(file.path)) continue;
    await mkdir(dirname(join(root, file.path)), { recursive: true });
    await writeFile(join(root, file.path), file.content);
    console.log(`wrote ${file.path}`);
  }
  for (const path of plan.extraneous) {
    await rm(join(root, path));
    console.log(`removed ${path}`);
  }
}
