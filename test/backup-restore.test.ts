/**
 * @module The disaster drill on the embedded store, with a real server process: under 16-way write load, back
 * up; keep writing; read the newest published checkpoint; kill -9; wipe the data directory; restore; start.
 * Every receipt acknowledged before the backup began is served byte for byte and proven in the log, the
 * restore's own audit is clean, and the audit against the newer checkpoint names the lost tail. A copy with one
 * byte changed, or with a receipt row deleted, is refused or flagged; a live data directory is never replaced.
 */
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnServer, tempDir, type Child } from './http-helpers.js';
import { cli, createWriteLoad, verifyAndLog, waitForLogSize } from './drill-helpers.js';

describe('aov backup / aov restore: the disaster drill (SQLite)', () => {
  const children: Child[] = [];
  const dirs: Array<() => void> = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    for (const d of dirs.splice(0)) d();
  });

  it('restores every receipt acknowledged before the backup, proves it in the log, and shows the lost tail', async () => {
    const tmp = tempDir('aov-drill-');
    dirs.push(tmp.cleanup);
    const data = path.join(tmp.dir, 'data');
    const backup = path.join(tmp.dir, 'backup');
    const server = await spawnServer(data, { FREE_ALLOWANCE_PER_DAY: '1000000' });
    children.push(server);

    const load = createWriteLoad(server.base);
    await load.until(100);
    const backupStarted = performance.now();
    const before = load.acked.filter((a) => a.at < backupStarted);
    const b = await cli(['backup', backup, '--data-dir', data]);
    expect(b.err).toBe('');
    expect(b.code).toBe(0);
    const manifest = JSON.parse(readFileSync(path.join(backup, 'manifest.json'), 'utf8'));
    expect(manifest.counts.receipts).toBeGreaterThanOrEqual(before.length);
    expect(manifest.files.map((f: { path: string }) => f.path)).toEqual(expect.arrayContaining(['verifier.db', 'log/note-key.pem']));
    expect(manifest.files.some((f: { path: string }) => f.path.startsWith('keys/') && f.path.endsWith('.pem'))).toBe(true);

    // More receipts after the backup, then wait until a checkpoint that includes them is published.
    const afterBackup = load.acked.length;
    await load.until(afterBackup + 100);
    await load.stop();
    const logged = load.acked.length;
    await waitForLogSize(server.base, logged);
    const published = await (await fetch(`${server.base}/log/checkpoint`)).text();
    writeFileSync(path.join(tmp.dir, 'checkpoint.txt'), published);
    const publishedSize = Number(published.split('\n')[1]);
    expect(publishedSize).toBeGreaterThanOrEqual(logged);

    server.proc.kill('SIGKILL');
    expect((await server.exited).signal).toBe('SIGKILL');
    rmSync(data, { recursive: true, force: true });

    const r = await cli(['restore', backup, '--data-dir', data]);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/^clean: /m);
    expect(r.code).toBe(0);

    // Against the checkpoint published before the crash, the restored log is short: the audit says by how much.
    const a = await cli(['log', 'audit', '--data-dir', data, '--checkpoint', path.join(tmp.dir, 'checkpoint.txt')]);
    expect(a.code).toBe(1);
    expect(a.out).toContain('tail_lost');
    expect(a.out).toContain(`published ${publishedSize}`);

    const second = await spawnServer(data);
    children.push(second);
    for (const x of before) {
      const res = await fetch(`${second.base}/verifications/${x.id}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(x.text);
    }
    // The restored receipts reach the log of the restarted service (queued ones within a second or so).
    await waitForLogSize(second.base, manifest.counts.receipts);
    for (const x of before) expect((await fetch(`${second.base}/log/proof/${x.id}`)).status).toBe(200);
    // A receipt acknowledged after the backup is either there or one of the entries the audit reported lost.
    const missing = [];
    for (const x of load.acked.slice(afterBackup)) if ((await fetch(`${second.base}/verifications/${x.id}`)).status === 404) missing.push(x.id);
    expect(missing.length).toBeGreaterThan(0);
    expect(missing.length).toBeLessThanOrEqual(publishedSize - manifest.log.tree_size);
    second.proc.kill('SIGTERM');
    await second.exited;
    const again = await cli(['log', 'audit', '--data-dir', data]);
    expect(again.out).toMatch(/^clean: /m);
  });

  it('refuses a tampered copy, flags one whose manifest was rewritten, and never replaces a live data directory', async () => {
    const tmp = tempDir('aov-drill-');
    dirs.push(tmp.cleanup);
    const data = path.join(tmp.dir, 'data');
    const backup = path.join(tmp.dir, 'backup');
    const server = await spawnServer(data);
    children.push(server);
    const ids = await verifyAndLog(server.base, 12);
    expect((await cli(['backup', backup, '--data-dir', data])).code).toBe(0);

    // The server is running: restore refuses its data directory, with or without --force.
    const live = await cli(['restore', backup, '--data-dir', data, '--force']);
    expect(live.code).toBe(2);
    expect(live.err).toContain('in use by a running server');
    server.proc.kill('SIGTERM');
    await server.exited;
    const occupied = await cli(['restore', backup, '--data-dir', data]);
    expect(occupied.code).toBe(2);
    expect(occupied.err).toContain('not empty');

    // One byte of the database changed: the manifest's hash refuses it, and nothing is replaced.
    const flipped = path.join(tmp.dir, 'flipped');
    cpSync(backup, flipped, { recursive: true });
    const db = readFileSync(path.join(flipped, 'verifier.db'));
    db[db.length - 100] ^= 0xff;
    writeFileSync(path.join(flipped, 'verifier.db'), db);
    const target = path.join(tmp.dir, 'target');
    const bad = await cli(['restore', flipped, '--data-dir', target]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('verifier.db differs from the manifest');
    expect(existsSync(target)).toBe(false);

    // A receipt row deleted and the file's hash rewritten: the row counts refuse it...
    const deleted = path.join(tmp.dir, 'deleted');
    cpSync(backup, deleted, { recursive: true });
    const Database = createRequire(import.meta.url)('better-sqlite3');
    const conn = new Database(path.join(deleted, 'verifier.db'));
    conn.prepare('DELETE FROM receipts WHERE verification_id = ?').run(ids[3]);
    conn.close();
    const rewrite = (patch: (m: any) => void) => {
      const file = path.join(deleted, 'manifest.json');
      const m = JSON.parse(readFileSync(file, 'utf8'));
      const bytes = readFileSync(path.join(deleted, 'verifier.db'));
      m.files.find((f: { path: string }) => f.path === 'verifier.db').sha256 = createHash('sha256').update(bytes).digest('hex');
      m.files.find((f: { path: string }) => f.path === 'verifier.db').bytes = bytes.length;
      patch(m);
      writeFileSync(file, JSON.stringify(m));
    };
    rewrite(() => undefined);
    const counted = await cli(['restore', deleted, '--data-dir', target]);
    expect(counted.code).toBe(2);
    expect(counted.err).toContain('rows of receipts');
    // ...and with the counts rewritten too, it is restored but the log's audit names the missing receipt.
    rewrite((m) => (m.counts.receipts -= 1));
    const audited = await cli(['restore', deleted, '--data-dir', target]);
    expect(audited.code).toBe(1);
    expect(audited.out).toContain(`receipt_deleted`);
    expect(audited.out).toContain(ids[3]);

    // The untouched copy restores over the stopped data directory with --force; the old files are kept aside.
    const forced = await cli(['restore', backup, '--data-dir', data, '--force']);
    expect(forced.code).toBe(0);
    expect(forced.out).toContain('before-restore-');
  });
});
