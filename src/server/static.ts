import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The web view's files (Vite's build in dist/web): `/assets/*` are content-hashed, so they
 * are cached for a year; every other path the API does not own is a client-side route of
 * the single page and gets index.html (never cached, so a new build shows at once).
 */

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
};

export interface StaticFile {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string;
}

/**
 * The default web root: `web/` beside the bundle that runs (dist/lorenz.js → dist/web; the
 * split build's chunks, dist/cli/chunks/*.js → dist/web; the image's /lorenz/lorenz.js →
 * /lorenz/web), else dist/web of the source tree (tsx, tests).
 */
export function defaultWebRoot(moduleUrl: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (let up = 0; up < 4; up += 1) {
    const candidate = join(dir, 'web');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    const dist = join(dir, 'dist', 'web');
    if (existsSync(join(dist, 'index.html'))) return dist;
    dir = dirname(dir);
  }
  return resolve('dist', 'web');
}

const NO_BUNDLE = `lorenz server: no web view here (index.html not found in the web root); build it with npm run build, or pass --web-root DIR\n`;

export function staticFiles(root: string) {
  const base = resolve(root);
  async function file(path: string): Promise<Buffer | undefined> {
    // Inside the root only: `..` and encoded slashes never leave it.
    const full = resolve(base, `.${path}`);
    if (full !== base && !full.startsWith(base + sep)) return undefined;
    try {
      if (!(await stat(full)).isFile()) return undefined;
      return await readFile(full);
    } catch {
      return undefined;
    }
  }
  return async function serve(pathname: string): Promise<StaticFile> {
    let path: string;
    try {
      path = decodeURIComponent(pathname);
    } catch {
      path = '/';
    }
    if (path.includes('\0')) path = '/';
    if (path.startsWith('/assets/') || /^\/[\w.-]+\.(ico|png|svg|txt)$/.test(path)) {
      const body = await file(path);
      if (body)
        return {
          status: 200,
          headers: {
            'Content-Type': TYPES[extname(path)] ?? 'application/octet-stream',
            'Cache-Control': path.startsWith('/assets/')
              ? 'public, max-age=31536000, immutable'
              : 'public, max-age=3600',
          },
          body,
        };
      if (path.startsWith('/assets/'))
        return {
          status: 404,
          headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
          body: 'not found\n',
        };
    }
    const index = await file('/index.html');
    if (!index)
      return {
        status: 503,
        headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
        body: NO_BUNDLE,
      };
    return {
      status: 200,
      headers: { 'Content-Type': TYPES['.html'] ?? 'text/html', 'Cache-Control': 'no-cache' },
      body: index,
    };
  };
}
