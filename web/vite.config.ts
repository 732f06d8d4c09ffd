/**
 * @module Build of the pages for people: web/ → dist/web (one HTML shell and
 * hashed assets under /assets), served by src/pages/plugin.ts. No inline code
 * (the CSP forbids it) and no module-preload polyfill. The pages use the package
 * only through its public entries (`agent-output-verifier/receipts`, …), resolved
 * here to their sources as package.json's `exports` maps them (dist/x.js ← src/x.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(readFileSync(path.resolve(here, '../package.json'), 'utf8')) as { name: string; exports: Record<string, { default: string }> };
const entries = Object.entries(pkg.exports).map(([subpath, target]) => ({
  find: new RegExp(`^${(pkg.name + subpath.slice(1)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
  replacement: path.resolve(here, '..', target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')),
}));

export default defineConfig({
  root: here,
  base: '/',
  publicDir: false,
  logLevel: 'warn',
  resolve: { alias: entries },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.resolve(here, '../dist/web'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
