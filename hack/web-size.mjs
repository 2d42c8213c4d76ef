// Prints the web view's bundle (dist/web, as `vite build` wrote it) file by file, raw and
// gzipped, and the total; warns when the gzipped total passes the budget docs/web-view.md
// states (150 KB), so a heavy dependency is noticed at the build that brings it in.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = 'dist/web';
const BUDGET = 150 * 1024;

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

let raw = 0;
let gzip = 0;
const lines = [];
for (const path of files(ROOT).sort()) {
  const bytes = readFileSync(path);
  const zipped = gzipSync(bytes, { level: 9 }).length;
  raw += bytes.length;
  gzip += zipped;
  lines.push(
    `  ${relative(ROOT, path).padEnd(40)} ${kb(bytes.length).padStart(9)} ${kb(zipped).padStart(9)} gzip`,
  );
}
function kb(n) {
  return `${(n / 1024).toFixed(1)} KB`;
}
console.log(`web view bundle (${ROOT}):`);
for (const line of lines) console.log(line);
console.log(
  `  ${'total'.padEnd(40)} ${kb(raw).padStart(9)} ${kb(gzip).padStart(9)} gzip (budget ${kb(BUDGET)})`,
);
if (gzip > BUDGET)
  console.warn(`web-size: the bundle is ${kb(gzip)} gzipped, over the ${kb(BUDGET)} budget`);
