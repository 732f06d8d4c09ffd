/**
 * @module The published package as a user gets it: `npm pack` (which builds through `prepack`),
 * install the tarball into an empty folder, then run the installed `aov`. Installing the
 * dependencies takes minutes, so this runs from `npm run test:package` (and .ci/run), not `npm test`.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string };

/** Run a command; resolve with its exit code and output whatever the code. */
async function sh(cmd: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

let work: string;
let app: string;
let tarball: string;
let files: string[];

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'aov-package-'));
  const packed = await sh('npm', ['pack', '--json', '--pack-destination', work], root);
  expect(packed.code, packed.stderr).toBe(0);
  const info = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = path.join(work, info[0].filename);
  files = info[0].files.map((f) => f.path);

  app = path.join(work, 'app');
  mkdirSync(app);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'empty-app', private: true }));
  // From the local npm cache where it can; the registry only for what the cache lacks. Install scripts
  // are skipped: the only one builds the SQLite addon, from source (minutes) where no prebuilt binary can
  // be downloaded, and the commands tested here (verify, --version) never load it.
  const installed = await sh('npm', ['install', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', tarball], app);
  expect(installed.code, installed.stderr).toBe(0);
}, 900_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the built CLI, the library, docs, examples and the licence, and no sources or tests', () => {
    for (const f of ['dist/cli/index.js', 'dist/index.js', 'dist/index.d.ts', 'dist/web/index.html', 'LICENSE', 'README.md', 'docs/protocol.md', 'docs/playground.png', 'examples/invoice/request.json']) {
      expect(files).toContain(f);
    }
    // The benchmark log is for the repository, not for users of the package.
    expect(files).not.toContain('docs/BENCHMARKS.md');
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.endsWith('.test.js') || f.endsWith('.map'))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
  });

  it('npx aov --version prints the package version', async () => {
    const r = await sh('npx', ['--no-install', 'aov', '--version'], app);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('npx aov verify fails the invoice example on its rule (exit 1) and passes the fixed output (exit 0)', async () => {
    const ex = path.join(app, 'node_modules', pkg.name, 'examples', 'invoice');
    const fail = await sh('npx', ['--no-install', 'aov', 'verify', path.join(ex, 'request.json')], app);
    expect(fail.code, fail.stderr).toBe(1);
    const body = JSON.parse(fail.stdout) as { result: string; summary: { blocking_checks: string[] }; schema_compliance: { passed: number; total: number } };
    expect(body.result).toBe('fail');
    expect(body.summary.blocking_checks).toEqual(['consistency:sum_equals']);
    expect(body.schema_compliance).toMatchObject({ passed: 22, total: 22 });

    const pass = await sh(
      'npx',
      ['--no-install', 'aov', 'verify', '--schema', path.join(ex, 'schema.json'), '--rules', path.join(ex, 'rules.json'), '--enforce-rules', '--output', path.join(ex, 'output-fixed.json'), '--format', 'text'],
      app,
    );
    expect(pass.code, pass.stderr).toBe(0);
    expect(pass.stdout).toMatch(/^pass\b/);
  });

  it('installs without the optional peers (ai, @langchain/core); the root, client, receipts and json entries load; an adapter entry loads and names the missing peer', async () => {
    for (const peer of ['ai', '@langchain/core']) {
      expect(() => readFileSync(path.join(app, 'node_modules', peer, 'package.json'))).toThrow();
    }
    const script = `
      const root = await import('${pkg.name}');
      const client = await import('${pkg.name}/client');
      const aiSdk = await import('${pkg.name}/ai-sdk');
      const langchain = await import('${pkg.name}/langchain');
      const receipts = await import('${pkg.name}/receipts');
      const json = await import('${pkg.name}/json');
      const out = { root: typeof root.applyRepairs, client: typeof client.createVerifierClient, loop: typeof client.RepairLoopError, receipts: typeof receipts.verifyReceipt, json: typeof json.parseStrictJson };
      const c = client.createVerifierClient({ baseUrl: 'http://127.0.0.1:9' });
      const spec = { task_id: 't', expected_schema: {} };
      out.ai = await aiSdk.generateVerifiedObject({ client: c, model: {}, prompt: 'x', verification: spec }).then(() => 'resolved', (e) => e.message);
      out.langchain = await langchain.createVerifiedChain({ client: c, model: {}, verification: spec }).then(() => 'resolved', (e) => e.message);
      console.log(JSON.stringify(out));
    `;
    const r = await sh('node', ['--input-type=module', '-e', script], app);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as Record<string, string>;
    expect(out).toMatchObject({ root: 'function', client: 'function', loop: 'function', receipts: 'function', json: 'function' });
    expect(out.ai).toMatch(/agent-output-verifier\/ai-sdk needs the optional peer dependency 'ai'.*npm install ai@5/);
    expect(out.langchain).toMatch(/agent-output-verifier\/langchain needs the optional peer dependency '@langchain\/core'.*npm install @langchain\/core@1/);
  });
});

