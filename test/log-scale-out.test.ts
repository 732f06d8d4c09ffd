/**
 * @module The scale-out setup of docs/operations.md ("Running several instances"), exactly as written: two real
 * `aov serve` processes, started at the same moment on one PostgreSQL with the same DATABASE_URL, DATABASE_SCHEMA,
 * KEY_ENCRYPTION_KEY and PUBLIC_BASE_URL and separate data directories. They publish one log note key (none of
 * them writes a key file); `aov log verify` of a receipt made by either instance succeeds against both;
 * `aov log monitor` exits 0 against both, also with the state (and pinned key) of the other. Skipped when
 * PostgreSQL is not reachable.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/index.js';
import { postJson, spawnServer, tempDir, type Child } from './http-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const pg = await postgresTestTarget('log scale-out (PostgreSQL)', 'aov_scale');

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), readFile: (p) => readFileSync(p, 'utf8') });
  return { code, out, err };
}

const text = async (url: string) => (await fetch(url)).text();

describe.skipIf(!pg.available)('two instances on one PostgreSQL, set up as docs/operations.md says', () => {
  const children: Child[] = [];
  const cleanups: Array<() => unknown> = [];
  afterAll(async () => {
    for (const c of children) {
      if (c.proc.exitCode === null && c.proc.signalCode === null) {
        c.proc.kill('SIGTERM');
        await c.exited;
      }
    }
    await pg.dropSchema();
    for (const c of cleanups) c();
  });

  it('share one note key: receipts of either verify in the log against both, and the monitor follows both', async () => {
    const env = {
      DATABASE_URL: pg.url,
      DATABASE_SCHEMA: pg.schema,
      KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PUBLIC_BASE_URL: 'https://verify.example.test',
    };
    const dirA = tempDir('aov-scale-a-');
    const dirB = tempDir('aov-scale-b-');
    const work = mkdtempSync(path.join(tmpdir(), 'aov-scale-work-'));
    cleanups.push(dirA.cleanup, dirB.cleanup, () => rmSync(work, { recursive: true, force: true }));
    // Started at the same moment on an empty database: the note key is decided once, there.
    const [a, b] = await Promise.all([spawnServer(dirA.dir, env), spawnServer(dirB.dir, env)]);
    children.push(a, b);

    const key = (await text(`${a.base}/log/key`)).trim();
    expect(key).toMatch(/^verify\.example\.test\/log\+[0-9a-f]{8}\+/);
    expect((await text(`${b.base}/log/key`)).trim()).toBe(key);
    for (const srv of [a, b]) {
      const card = JSON.parse(await text(`${srv.base}/.well-known/agent-card.json`)) as { capabilities: { extensions: Array<{ params?: { transparencyLog?: { verifierKey: string } } }> } };
      expect(card.capabilities.extensions.find((e) => e.params?.transparencyLog)?.params?.transparencyLog?.verifierKey).toBe(key);
      const health = (await (await fetch(`${srv.base}/health`)).json()) as { status: string; transparency_log: unknown };
      expect(health).toMatchObject({ status: 'ok', transparency_log: 'ok' });
    }
    // No file to copy: neither instance wrote a note key file.
    expect(existsSync(path.join(dirA.dir, 'log', 'note-key.pem'))).toBe(false);
    expect(existsSync(path.join(dirB.dir, 'log', 'note-key.pem'))).toBe(false);

    const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 0 } } };
    const files: string[] = [];
    for (const [i, srv] of [a, b, a, b].entries()) {
      const res = await postJson(srv.base, '/verify/schema', JSON.stringify({ task_id: `scale-${i}`, agent_id: 'seller-scale', expected_schema: schema, submitted_output: { n: i % 2 ? -1 : i } }));
      expect(res.status).toBe(200);
      const id = ((await res.json()) as { verification_id: string }).verification_id;
      const file = path.join(work, `receipt-${i}.json`);
      // The receipt as the other instance serves it (byte-identical: one database).
      writeFileSync(file, await text(`${(srv === a ? b : a).base}/verifications/${id}`));
      files.push(file);
    }
    for (const file of files) {
      for (const srv of [a, b]) {
        const r = await cli(['log', 'verify', file, '--log', srv.base]);
        expect(r.out + r.err).toMatch(/^ok: receipt /);
        expect(r.code).toBe(0);
      }
    }

    const stateA = path.join(work, 'monitor-a.json');
    const stateB = path.join(work, 'monitor-b.json');
    for (const [srv, state] of [[a, stateA], [b, stateB]] as const) {
      const r = await cli(['log', 'monitor', srv.base, '--state', state]);
      expect(r.out + r.err).toMatch(/^ok: /);
      expect(r.code).toBe(0);
    }
    // More receipts through both; each monitor now reads the other instance, with the key it pinned from its first.
    for (const [i, srv] of [b, a].entries()) {
      expect((await postJson(srv.base, '/verify/schema', JSON.stringify({ task_id: `scale-more-${i}`, agent_id: 'seller-scale', expected_schema: schema, submitted_output: { n: i } }))).status).toBe(200);
    }
    for (const [srv, state] of [[b, stateA], [a, stateB]] as const) {
      const r = await cli(['log', 'monitor', srv.base, '--state', state, '--json']);
      expect(r.code).toBe(0);
      const report = JSON.parse(r.out) as { ok: boolean; to: number };
      expect(report.ok).toBe(true);
      expect(report.to).toBeGreaterThanOrEqual(files.length);
    }
    for (const srv of [a, b]) expect(JSON.parse(await text(`${srv.base}/health`))).toMatchObject({ status: 'ok', transparency_log: 'ok' });
  }, 120_000);
});
