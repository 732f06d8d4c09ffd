/**
 * @module The disaster drill on PostgreSQL, as docs/operations.md tells an operator to run it, with a real server
 * process on a throwaway schema: under 16-way write load, `pg_dump -Fc -n <schema>`; keep writing; read the newest
 * published checkpoint; kill -9; drop the schema; `pg_restore`; `aov log audit --checkpoint`; start. Every receipt
 * acknowledged before the dump began is served byte for byte and proven in the log, the audit names the lost tail,
 * and the restored service takes new verifications. The default schema restores into a fresh database too, and a
 * receipt row deleted, or one byte of a stored receipt changed, there is flagged by the audit. Skipped (visibly)
 * when PostgreSQL or its client tools are missing.
 */
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { postJson, spawnServer, tempDir, type Child } from './http-helpers.js';
import { cli, createWriteLoad, drillBody, verifyAndLog, waitForLogSize } from './drill-helpers.js';
import { POSTGRES_URL, postgresTestTarget } from './postgres-helpers.js';
import { skipUnlessAvailable } from './requirements.js';

const run = promisify(execFile);

const drill = await postgresTestTarget('backup-restore-postgres', 'aov_drill');
/** Two databases of their own (source and restore target), named like the drill's schema. */
const databases = [`${drill.schema}_src`, `${drill.schema}_dst`];
const databaseUrl = (name: string) => `${POSTGRES_URL.slice(0, POSTGRES_URL.lastIndexOf('/'))}/${name}`;
const missingTools = ['pg_dump', 'pg_restore'].filter((t) => spawnSync(t, ['--version']).status !== 0);
const skip =
  !drill.available ||
  skipUnlessAvailable(missingTools.length === 0, 'REQUIRE_POSTGRES', `backup-restore-postgres: ${missingTools.join(' and ')} not found (Debian: postgresql-client)`);

/** The documented commands, run as an operator runs them (asynchronously: the write load keeps going meanwhile). */
const pgDump = (url: string, schema: string, file: string) => run('pg_dump', ['-Fc', '-n', schema, '-f', file, url]);
// --clean --if-exists: the dump creates its schema, which an empty database already has when it is `public`.
const pgRestore = (url: string, file: string) => run('pg_restore', ['--clean', '--if-exists', '--exit-on-error', '--single-transaction', '-d', url, file]);

type AuditReport = { ok: boolean; tree_size: number; findings: Array<{ kind: string; verification_id?: string; detail: string }> };

/**
 * `aov log audit` against a schema, configured as docs/operations.md says (DATABASE_URL and DATABASE_SCHEMA, no data
 * directory): its exit code and its report (--json). The text run shows the checkpoints were checked with the note
 * key the database records.
 */
async function audit(url: string, schema: string, checkpoint?: string) {
  vi.stubEnv('DATABASE_URL', url);
  vi.stubEnv('DATABASE_SCHEMA', schema);
  try {
    const args = ['log', 'audit', ...(checkpoint ? ['--checkpoint', checkpoint] : [])];
    const text = await cli(args);
    expect(text.err).toBe('');
    expect(text.out).not.toContain('no note key');
    const r = await cli([...args, '--json']);
    expect(r.code).toBe(text.code);
    return { code: r.code, report: JSON.parse(r.out) as AuditReport };
  } finally {
    vi.unstubAllEnvs();
  }
}

describe.skipIf(skip)('pg_dump / pg_restore: the disaster drill (PostgreSQL)', () => {
  const children: Child[] = [];
  const dirs: Array<() => void> = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
  });
  afterAll(async () => {
    await drill.dropSchema();
    for (const name of databases) await drill.sql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    for (const d of dirs.splice(0)) d();
  });

  it('restores every receipt acknowledged before pg_dump began, proves it in the log, and shows the lost tail', async () => {
    const { url, schema } = drill;
    const tmp = tempDir('aov-pgdrill-');
    dirs.push(tmp.cleanup);
    // The data directory holds what is not in the database here (signing keys without KEY_ENCRYPTION_KEY, the note
    // key file); only the database is lost and restored.
    const data = path.join(tmp.dir, 'data');
    const dump = path.join(tmp.dir, 'aov.dump');
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: schema, FREE_ALLOWANCE_PER_DAY: '1000000' };
    const server = await spawnServer(data, env);
    children.push(server);

    const load = createWriteLoad(server.base);
    await load.until(100);
    const dumpStarted = performance.now();
    const before = load.acked.filter((a) => a.at < dumpStarted);
    await pgDump(url, schema, dump);
    const afterDump = load.acked.length;
    expect(afterDump).toBeGreaterThan(before.length); // the dump ran under load

    // More receipts after the dump, then wait until a checkpoint that includes them is published.
    await load.until(afterDump + 100);
    await load.stop();
    const logged = load.acked.length;
    await waitForLogSize(server.base, logged);
    const published = await (await fetch(`${server.base}/log/checkpoint`)).text();
    const checkpoint = path.join(tmp.dir, 'last-checkpoint.txt');
    writeFileSync(checkpoint, published);
    const publishedSize = Number(published.split('\n')[1]);
    expect(publishedSize).toBeGreaterThanOrEqual(logged);

    server.proc.kill('SIGKILL');
    expect((await server.exited).signal).toBe('SIGKILL');
    await drill.dropSchema();
    expect(await drill.sql('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).toEqual([]);

    await pgRestore(url, dump);

    // Against the checkpoint published before the crash, the restored log is short: the audit says by how much,
    // and finds nothing else wrong.
    const a = await audit(url, schema, checkpoint);
    expect(a.code).toBe(1);
    expect(a.report.findings.map((f) => f.kind)).toEqual(['tail_lost']);
    expect(a.report.findings[0]?.detail).toContain(`published ${publishedSize}`);
    expect(a.report.tree_size).toBeLessThan(publishedSize);

    const second = await spawnServer(data, env);
    children.push(second);
    for (const x of before) {
      const res = await fetch(`${second.base}/verifications/${x.id}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(x.text);
    }
    // Receipts that were still queued for the log when the dump was taken reach it once the service runs again.
    await waitForLogSize(second.base, before.length);
    for (const x of before) expect((await fetch(`${second.base}/log/proof/${x.id}`)).status).toBe(200);
    // A receipt acknowledged after the dump began is either there or one of the entries the audit reported lost.
    const missing = [];
    for (const x of load.acked.slice(before.length)) if ((await fetch(`${second.base}/verifications/${x.id}`)).status === 404) missing.push(x.id);
    expect(missing.length).toBeGreaterThan(0);
    expect(missing.length).toBeLessThanOrEqual(publishedSize - a.report.tree_size);

    // The restored service takes new verifications, and logs them.
    const fresh = await postJson(second.base, '/verify/schema', drillBody(1_000_001));
    expect(fresh.status).toBe(200);
    const freshText = await fresh.text();
    const freshId = (JSON.parse(freshText) as { verification_id: string }).verification_id;
    expect(await (await fetch(`${second.base}/verifications/${freshId}`)).text()).toBe(freshText);
    const t0 = Date.now();
    while ((await fetch(`${second.base}/log/proof/${freshId}`)).status !== 200 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
    expect((await fetch(`${second.base}/log/proof/${freshId}`)).status).toBe(200);
    second.proc.kill('SIGTERM');
    await second.exited;
    const again = await audit(url, schema);
    expect(again.report.findings).toEqual([]);
    expect(again.code).toBe(0);
  });

  it('restores the default schema into a fresh database, and flags a receipt row deleted or one byte of a receipt changed there', async () => {
    // The default schema (`public`) of a database of its own, dumped and restored into another, empty database:
    // the case of most deployments, and the one where a plain pg_restore collides with the empty `public` schema.
    const [source, restored] = [databaseUrl(databases[0] as string), databaseUrl(databases[1] as string)];
    for (const name of databases) await drill.sql(`CREATE DATABASE "${name}"`);
    const tmp = tempDir('aov-pgdrill-');
    dirs.push(tmp.cleanup);
    const data = path.join(tmp.dir, 'data');
    const dump = path.join(tmp.dir, 'aov.dump');
    const server = await spawnServer(data, { DATABASE_URL: source, DATABASE_SCHEMA: 'public' });
    children.push(server);
    const ids = await verifyAndLog(server.base, 12);
    await pgDump(source, 'public', dump);
    server.proc.kill('SIGKILL');
    await server.exited;
    await pgRestore(restored, dump);
    const clean = await audit(restored, 'public');
    expect(clean.report.findings).toEqual([]);
    expect(clean.report.tree_size).toBe(ids.length);
    expect(clean.code).toBe(0);

    const [deleted, changed] = [ids[3] as string, ids[7] as string];
    await drill.sql(`DELETE FROM public.receipts WHERE verification_id = $1`, [deleted], restored);
    const [row] = await drill.sql<{ receipt: string }>(`SELECT receipt FROM public.receipts WHERE verification_id = $1`, [changed], restored);
    const text = (row as { receipt: string }).receipt;
    const at = text.indexOf('"pass"') >= 0 ? text.indexOf('"pass"') + 1 : text.indexOf('"fail"') + 1;
    expect(at).toBeGreaterThan(0);
    const edited = `${text.slice(0, at)}${text[at] === 'p' ? 'P' : 'F'}${text.slice(at + 1)}`; // one byte: "pass" → "Pass"
    await drill.sql(`UPDATE public.receipts SET receipt = $2 WHERE verification_id = $1`, [changed, edited], restored);

    const flagged = await audit(restored, 'public');
    expect(flagged.code).toBe(1);
    expect(flagged.report.findings.map((f) => `${f.kind} ${f.verification_id}`).sort()).toEqual([`receipt_changed ${changed}`, `receipt_deleted ${deleted}`].sort());
  });
});
