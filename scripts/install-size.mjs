/**
 * @module What an operator's install weighs: packs this checkout (`npm pack`, the built dist/ as it is; run
 * `npm run build` first), installs the tarball with production dependencies only into an empty folder
 * (`npm install --omit=dev`), and prints the tarball's size, node_modules' disk usage and its largest
 * packages. With `--payments`, installs the optional payment peers too (what X402_ENABLED or
 * ERC8004_ENABLED needs) and prints what they add. Needs the npm registry (or a warm npm cache).
 *
 *   npm run size [-- --payments] [-- --top 15] [-- --keep]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const top = Number(argv[argv.indexOf('--top') + 1]) || 15;
const withPayments = argv.includes('--payments');
const keep = argv.includes('--keep');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

/** Disk usage of a file tree in bytes (allocated blocks, as du counts; hard links once). */
function diskUsage(p, seen = new Set()) {
  const st = lstatSync(p);
  if (seen.has(st.ino)) return 0;
  seen.add(st.ino);
  let total = st.blocks * 512;
  if (st.isDirectory()) for (const name of readdirSync(p)) total += diskUsage(path.join(p, name), seen);
  return total;
}

/** Every installed package directly under node_modules (scoped ones as @scope/name), with its disk usage. */
function packages(modules) {
  const out = [];
  for (const name of readdirSync(modules)) {
    if (name.startsWith('.')) continue;
    const dir = path.join(modules, name);
    if (name.startsWith('@')) for (const sub of readdirSync(dir)) out.push({ name: `${name}/${sub}`, bytes: diskUsage(path.join(dir, sub)) });
    else out.push({ name, bytes: diskUsage(dir) });
  }
  return out.sort((a, b) => b.bytes - a.bytes);
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

if (!existsSync(path.join(root, 'dist/cli/index.js'))) {
  process.stderr.write('No dist/: run `npm run build` first.\n');
  process.exit(2);
}
const work = mkdtempSync(path.join(tmpdir(), 'aov-install-size-'));
try {
  // --ignore-scripts: the tarball of the dist/ already built, without prepack's clean rebuild.
  const [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], root));
  const tarball = path.join(work, packed.filename);
  const app = path.join(work, 'app');
  execFileSync('mkdir', [app]);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'aov-install-size', private: true }));
  const t0 = Date.now();
  npm(['install', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error', tarball], app);
  const seconds = Math.round((Date.now() - t0) / 1000);
  const modules = path.join(app, 'node_modules');
  const total = diskUsage(modules);
  const list = packages(modules);
  process.stdout.write(
    `tarball: ${mb(statSync(tarball).size)} (${packed.entryCount} files, ${mb(packed.unpackedSize)} unpacked)\n` +
      `npm install --omit=dev: ${mb(total)} in node_modules, ${list.length} packages (${seconds} s here)\n\nlargest packages:\n` +
      list.slice(0, top).map((p) => `  ${mb(p.bytes).padStart(9)}  ${p.name}`).join('\n') + '\n',
  );
  if (withPayments) {
    const peers = Object.keys(pkg.peerDependenciesMeta ?? {}).filter((name) => name === 'viem' || name.startsWith('@x402/') || name.startsWith('@solana/'));
    npm(['install', '--no-audit', '--no-fund', '--loglevel=error', ...peers.map((name) => `${name}@${pkg.peerDependencies[name]}`)], app);
    const withPeers = diskUsage(modules);
    process.stdout.write(`\nwith the payment peers (${peers.join(' ')}): ${mb(withPeers)} (+${mb(withPeers - total)})\n`);
  }
  if (keep) process.stdout.write(`\nkept: ${app}\n`);
} finally {
  if (!keep) rmSync(work, { recursive: true, force: true });
}
