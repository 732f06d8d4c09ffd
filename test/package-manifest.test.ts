/**
 * @module What the package manifest promises, checked without installing anything: the
 * file list `npm pack` would ship (the README's images in, the benchmark log out), and
 * Node versions: every runtime dependency in the lockfile accepts the Node running the
 * tests (on Node 20, `npm ci` must print no EBADENGINE for them), as does the package itself.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { projectRoot } from './http-helpers.js';

const run = promisify(execFile);
// semver is what npm itself judges `engines` with; it is in the dev tree through several tools.
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean };

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  engines?: Record<string, string> | string[];
}

describe('the package manifest', () => {
  it('ships every image the README shows, and not docs/BENCHMARKS.md', async () => {
    // --ignore-scripts: the file list only, without the build prepack runs (dist is not asserted here).
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: projectRoot, maxBuffer: 64 * 1024 * 1024 });
    const files = (JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    const readme = readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
    const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((src) => !/^[a-z]+:/i.test(src));
    expect(images.length).toBeGreaterThan(0);
    for (const image of images) expect(files).toContain(path.posix.normalize(image));
    expect(files).not.toContain('docs/BENCHMARKS.md');
    expect(files).toContain('docs/protocol.md');
  });

  it('every runtime dependency accepts this Node, as the package does', () => {
    const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
    const lock = JSON.parse(readFileSync(path.join(projectRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
    const refused: string[] = [];
    let checked = 0;
    for (const [where, entry] of Object.entries(lock.packages)) {
      if (where === '' || entry.dev === true || entry.optional === true) continue;
      const range = entry.engines && !Array.isArray(entry.engines) ? entry.engines.node : undefined;
      if (range === undefined) continue;
      checked++;
      if (!semver.satisfies(process.version, range)) refused.push(`${where}@${entry.version ?? '?'} (node ${range})`);
    }
    expect(checked).toBeGreaterThan(50);
    expect(refused).toEqual([]);
  });
});
