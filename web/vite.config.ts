// The web view's build: `npm run build` runs it from the repository's root, so paths are
// relative to it. The output, dist/web/, is what `lorenz server` serves (index.html plus
// assets/ with hashed names), under a Content-Security-Policy that allows no inline script
// or style and nothing from another origin: hence no inlined assets and no inline
// module-preload polyfill.
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

export default defineConfig({
  root: 'web',
  base: '/',
  plugins: [preact()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: true,
  },
});
