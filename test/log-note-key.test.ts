/**
 * @module The log note key through the running service. SQLite: an existing deployment (a note key file, no
 * database record) keeps its key across the upgrade, with and without KEY_ENCRYPTION_KEY, so a monitor's
 * state and earlier receipts keep verifying; a changed PUBLIC_BASE_URL (a new note key name) signs nothing,
 * reported as degraded `/health` with a code, until `aov log resign`. PostgreSQL: two instances that each
 * made a key file of their own (the old scale-out setup) no longer sign under two keys: the second one
 * reports its key is not the log's, publishes the log's key, and its receipts are logged by the first.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/index.js';
import { loadOrCreateNoteSigner } from '../src/log/index.js';
import { postJson, startApp, tempDir, type Running } from './http-helpers.js';
import { postgresTestTarget } from './postgres-helpers.js';

const pg = await postgresTestTarget('log note key (PostgreSQL)', 'aov_notekey');
const work = mkdtempSync(path.join(tmpdir(), 'aov-note-key-work-'));
const cleanups: Array<() => unknown> = [() => rmSync(work, { recursive: true, force: true })];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function cli(args: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const prev = { ...process.env };
  Object.assign(process.env, env);
  try {
    const code = await main(args, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), readFile: (p) => readFileSync(p, 'utf8') });
    return { code, out, err };
  } finally {
    for (const k of Object.keys(env)) if (prev[k] === undefined) delete process.env[k];
  }
}

const schema = { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } };
let seq = 0;
async function receiptFile(app: Running): Promise<{ id: string; file: string }> {
  const res = await postJson(app.base, '/verify/schema', JSON.stringify({ task_id: `nk-${seq}`, agent_id: 'seller-nk', expected_schema: schema, submitted_output: { n: seq } }));
  expect(res.status).toBe(200);
  const id = ((await res.json()) as { verification_id: string }).verification_id;
  const file = path.join(work, `receipt-${seq++}.json`);
  writeFileSync(file, await (await fetch(`${app.base}/verifications/${id}`)).text());
  return { id, file };
}
const logKey = async (app: Running) => (await (await fetch(`${app.base}/log/key`)).text()).trim();
const health = async (app: Running) => (await (await fetch(`${app.base}/health`)).json()) as { status: string; transparency_log: unknown; warnings?: string[] };
const checkpoint = async (app: Running) => (await (await fetch(`${app.base}/log/checkpoint`)).text()).split('\n');

type Db = { prepare(s: string): { run(...a: unknown[]): { changes: number }; get(...a: unknown[]): unknown }; exec(s: string): void; close(): void };
function sqlite(dir: string): Db {
  const Database = createRequire(import.meta.url)('better-sqlite3') as new (f: string) => Db;
  return new Database(path.join(dir, 'verifier.db'));
}

describe('log note key, SQLite', () => {
  /** Back to the schema before this version: the note key only in its file, no table, the migration not applied. */
  function downgrade(dir: string): void {
    const db = sqlite(dir);
    db.exec('DROP TABLE log_note_keys; DELETE FROM schema_migrations WHERE version = 7;');
    db.close();
  }

  for (const mode of ['file', 'database'] as const) {
    it(`an existing deployment keeps its note key across the upgrade (${mode} mode)`, async () => {
      const tmp = tempDir('aov-nk-upgrade-');
      cleanups.push(tmp.cleanup);
      const keyFile = path.join(tmp.dir, 'log', 'note-key.pem');
      const env: Record<string, string> = { PUBLIC_BASE_URL: 'https://verify.example.test' };
      if (mode === 'database') env.KEY_ENCRYPTION_KEY = randomBytes(32).toString('base64');
      // The key file a service made on its first start before this version.
      const vkey = loadOrCreateNoteSigner(keyFile, 'verify.example.test/log').verifierKey;
      let app = await startApp(tmp.dir, env);
      expect(await logKey(app)).toBe(vkey);
      const first = await receiptFile(app);
      const state = path.join(work, `upgrade-${mode}.json`);
      expect((await cli(['log', 'monitor', app.base, '--state', state])).code).toBe(0);
      await app.close();
      downgrade(tmp.dir);

      app = await startApp(tmp.dir, env);
      expect(await logKey(app)).toBe(vkey);
      expect(await health(app)).toMatchObject({ status: 'ok', transparency_log: 'ok' });
      await receiptFile(app);
      expect((await cli(['log', 'monitor', app.base, '--state', state])).code).toBe(0);
      await app.close();
      const db = sqlite(tmp.dir);
      const row = db.prepare('SELECT source, private_key FROM log_note_keys').get() as { source: string; private_key: string | null };
      db.close();
      expect(row.source).toBe('file');
      if (mode === 'file') {
        expect(row.private_key).toBeNull();
      } else {
        // Imported into the database, encrypted: the file is no longer needed.
        expect(row.private_key).toMatch(/^aes-256-gcm:v1:/);
        rmSync(keyFile);
      }

      app = await startApp(tmp.dir, env);
      cleanups.push(() => app.close());
      expect(existsSync(keyFile)).toBe(mode === 'file');
      expect(await logKey(app)).toBe(vkey);
      const third = await receiptFile(app);
      // Its proof integrates it, so the monitor below sees all three.
      expect((await cli(['log', 'verify', third.file, '--log', app.base])).code).toBe(0);
      expect(await health(app)).toMatchObject({ status: 'ok', transparency_log: 'ok' });
      const monitored = await cli(['log', 'monitor', app.base, '--state', state, '--json']);
      expect(monitored.code).toBe(0);
      expect((JSON.parse(monitored.out) as { to: number }).to).toBe(3);
      expect((await cli(['log', 'verify', first.file, '--log', app.base])).code).toBe(0);
      const audit = await cli(['log', 'audit', '--data-dir', tmp.dir, '--json']);
      expect(JSON.parse(audit.out)).toMatchObject({ ok: true, findings: [] });
    }, 60_000);
  }

  it('a new PUBLIC_BASE_URL signs nothing over the old checkpoint (degraded, coded) until `aov log resign`', async () => {
    const tmp = tempDir('aov-nk-url-');
    cleanups.push(tmp.cleanup);
    let app = await startApp(tmp.dir, { PUBLIC_BASE_URL: 'https://old.example.test' });
    const before = await receiptFile(app);
    // Its proof integrates it: the checkpoint now covers it.
    expect((await cli(['log', 'verify', before.file, '--log', app.base])).code).toBe(0);
    const oldCheckpoint = await checkpoint(app);
    expect(oldCheckpoint[1]).toBe('1');
    await app.close();

    const env = { PUBLIC_BASE_URL: 'https://new.example.test' };
    app = await startApp(tmp.dir, env);
    cleanups.push(() => app.close());
    const h = await health(app);
    expect(h.status).toBe('degraded');
    expect(h.transparency_log).toMatchObject({ status: 'not_signing', code: 'checkpoint_signed_by_other_key' });
    expect(h.warnings?.join('\n')).toContain('checkpoint_signed_by_other_key');
    const later = await receiptFile(app);
    await new Promise((r) => setTimeout(r, 500));
    expect(await checkpoint(app)).toEqual(oldCheckpoint);
    expect((await cli(['log', 'verify', later.file, '--log', app.base])).code).not.toBe(0);
    expect((await cli(['log', 'monitor', app.base])).code).not.toBe(0);

    const resigned = await cli(['log', 'resign', '--data-dir', tmp.dir], env);
    expect(resigned.err).toBe('');
    expect(resigned.out).toMatch(/^ok: the checkpoint of 1 entries is now signed by new\.example\.test\/log\+/);
    expect(resigned.code).toBe(0);
    expect((await cli(['log', 'resign', '--data-dir', tmp.dir], env)).out).toMatch(/already signed/);
    const t0 = Date.now();
    while ((await health(app)).status !== 'ok') {
      expect(Date.now() - t0).toBeLessThan(2000);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await cli(['log', 'verify', later.file, '--log', app.base])).code).toBe(0);
    expect((await cli(['log', 'monitor', app.base])).code).toBe(0);
    expect((await checkpoint(app))[0]).toBe('new.example.test/log');
  }, 60_000);
});

describe.skipIf(!pg.available)('log note key, PostgreSQL', () => {
  it('two instances with key files of their own: one signing identity; the other reports it and its receipts are still logged', async () => {
    cleanups.push(() => pg.dropSchema());
    const env = { DATABASE_URL: pg.url, DATABASE_SCHEMA: pg.schema, PUBLIC_BASE_URL: 'https://verify.example.test' };
    const dirA = tempDir('aov-nk-a-');
    const dirB = tempDir('aov-nk-b-');
    cleanups.push(dirA.cleanup, dirB.cleanup);
    // Each instance's key file, made by itself, as before the key was kept in the database; the signing keys are
    // shared the way the docs describe for file mode (one keys directory).
    const fileA = loadOrCreateNoteSigner(path.join(dirA.dir, 'log', 'note-key.pem'), 'verify.example.test/log');
    const fileB = loadOrCreateNoteSigner(path.join(dirB.dir, 'log', 'note-key.pem'), 'verify.example.test/log');
    const a = await startApp(dirA.dir, env);
    cleanups.push(() => a.close());
    const b = await startApp(dirA.dir, { ...env, LOG_NOTE_KEY_FILE: path.join(dirB.dir, 'log', 'note-key.pem') });
    cleanups.push(() => b.close());

    expect(await logKey(a)).toBe(fileA.verifierKey);
    expect(await logKey(b)).toBe(fileA.verifierKey);
    expect(await health(a)).toMatchObject({ status: 'ok', transparency_log: 'ok' });
    const hb = await health(b);
    expect(hb.status).toBe('degraded');
    expect(hb.transparency_log).toMatchObject({ code: 'note_key_not_recorded', problem: expect.stringContaining(fileB.verifierKey) });

    const fromB = await receiptFile(b);
    for (const srv of [a, b]) expect((await cli(['log', 'verify', fromB.file, '--log', srv.base])).code).toBe(0);
    for (const srv of [a, b]) expect((await cli(['log', 'monitor', srv.base])).code).toBe(0);
    // B never signed: every checkpoint is A's.
    expect((await checkpoint(b)).at(-2)).toMatch(/^\u2014 verify\.example\.test\/log /);
    expect((await cli(['log', 'verify', fromB.file, '--log', b.base, '--key', fileB.verifierKey])).code).toBe(1);
  }, 60_000);
});
