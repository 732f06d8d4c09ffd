/**
 * @module `npm start`'s first step: build (TypeScript and the pages) only when a source is newer than what is
 * in dist/, and say which it is, so a start on a built tree takes no build at all. Plain JavaScript: it must run
 * before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const inputs = ['src', 'web', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];
const outputs = ['dist/cli/index.js', 'dist/index.js', 'dist/web/index.html'];

/** Newest modification time under `p` (a file or a folder), skipping tests, which are not built. */
function newest(p) {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return p.endsWith('.test.ts') ? 0 : st.mtimeMs;
  let max = st.mtimeMs; // a deleted source changes its folder's time
  for (const name of readdirSync(p)) max = Math.max(max, newest(path.join(p, name)));
  return max;
}

const built = outputs.map((f) => path.join(root, f));
const missing = built.filter((f) => !existsSync(f));
const sourceTime = Math.max(...inputs.map((f) => newest(path.join(root, f))));
const buildTime = missing.length > 0 ? 0 : Math.min(...built.map((f) => statSync(f).mtimeMs));

if (missing.length === 0 && buildTime >= sourceTime) {
  process.stdout.write(`dist/ is up to date (built ${new Date(buildTime).toISOString()}); starting without a build\n`);
} else {
  process.stdout.write(
    missing.length > 0
      ? 'No build yet: building (tsc and the web pages), the server starts in a few seconds...\n'
      : 'Sources are newer than dist/: rebuilding (tsc and the web pages), the server starts in a few seconds...\n',
  );
  const run = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
