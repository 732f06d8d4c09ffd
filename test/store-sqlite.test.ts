/** @module The Store contract against the embedded SQLite store (a real file in a temp dir, real child processes). */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { receiptValues } from '../src/store/common.js';
import { openStore } from '../src/store/index.js';
import { SQLITE_MIGRATIONS } from '../src/store/migrations/sqlite.js';
import { createSqliteStore } from '../src/store/sqlite.js';
import { createSqliteOffloadStore } from '../src/store/sqlite-offload.js';
import { SQLITE_WRITE_SQL } from '../src/store/sqlite-sql.js';
import { defineStoreContract, receipt } from './store-contract.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'aov-store-'));
const file = join(dir, 'nested', 'verifier.db');
const worker = resolve(here, 'store-sqlite-worker.ts');
interface RawConnection {
  prepare(sql: string): { run(...params: unknown[]): unknown; get(...params: unknown[]): unknown; all(...params: unknown[]): unknown[] };
  exec(sql: string): unknown;
  pragma(sql: string): unknown;
  readonly inTransaction: boolean;
  close(): void;
}
const Database = createRequire(import.meta.url)('better-sqlite3') as new (file: string) => RawConnection;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Timed {
  startedAt: number;
  finishedAt: number;
}

/**
 * Run `count` worker processes that start their work together: each loads, says
 * `ready` and blocks; once all are ready they get the start line at once. Fails
 * unless the workers' work really overlapped in time (the latest start came
 * before the earliest finish), so a race test can never pass by running its
 * workers one after another.
 */
async function raceWorkers<T>(count: number, args: string[]): Promise<Array<T & Timed>> {
  const children: ChildProcess[] = [];
  try {
    const runs = Array.from({ length: count }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', worker, ...args], { cwd: resolve(here, '..'), stdio: ['pipe', 'pipe', 'inherit'] });
      children.push(child);
      let out = '';
      let markReady!: () => void;
      const ready = new Promise<void>((r) => (markReady = r));
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString('utf8');
        if (out.startsWith('ready\n')) markReady();
      });
      const result = new Promise<T & Timed>((done, fail) => {
        child.once('error', fail);
        child.once('close', (code) => {
          if (code !== 0) return fail(new Error(`worker exited with ${code}: ${out}`));
          done(JSON.parse(out.slice('ready\n'.length).trim()) as T & Timed);
        });
      });
      // A worker that dies before saying ready fails the test here rather than hanging it.
      return { ready: Promise.race([ready, result.then(() => { throw new Error(`worker exited before ready: ${out}`); })]), result };
    });
    await Promise.all(runs.map((r) => r.ready));
    for (const c of children) c.stdin!.write('go\n');
    const outs = await Promise.all(runs.map((r) => r.result));
    const latestStart = Math.max(...outs.map((o) => o.startedAt));
    const earliestFinish = Math.min(...outs.map((o) => o.finishedAt));
    expect(latestStart, 'the workers ran one after another, not concurrently').toBeLessThan(earliestFinish);
    return outs;
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

defineStoreContract('sqlite', {
  open: async () => createSqliteStore({ file }),
  async consumeFromWorkers({ clientKey, day, limit, workers, attemptsPerWorker }) {
    // Separate OS processes: only SQLite's file locking keeps the count exact here.
    const outs = await raceWorkers<{ granted: number }>(workers, ['consume', file, clientKey, day, String(limit), String(attemptsPerWorker)]);
    return outs.map((o) => o.granted);
  },
});

// The service's writer: allowance and receipts on a worker thread, the rest (payments, pending settlements) on the main connection.
const offloadFile = join(dir, 'offload', 'verifier.db');
defineStoreContract('sqlite (worker writer)', {
  open: async () => createSqliteOffloadStore({ file: offloadFile }),
  async consumeFromWorkers({ clientKey, day, limit, workers, attemptsPerWorker }) {
    const outs = await raceWorkers<{ granted: number }>(workers, ['consume', offloadFile, clientKey, day, String(limit), String(attemptsPerWorker)]);
    return outs.map((o) => o.granted);
  },
});

describe('sqlite specifics', () => {
  // Group commit puts concurrent writes in one transaction: a failing batch must roll back alone, as a savepoint.
  for (const [name, open] of [
    ['group commit', (f: string) => createSqliteStore({ file: f, groupCommit: true })],
    ['worker writer', (f: string) => createSqliteOffloadStore({ file: f })],
  ] as const) {
    it(`${name}: a batch that fails inside a shared commit leaves none of its receipts, and the writes beside it commit`, async () => {
      const s = open(join(dir, `group-${name.replace(' ', '-')}.db`));
      try {
        const existing = receipt('g-agent', '2026-03-01T10:00:00Z', 'pass');
        await s.saveReceipt(existing);
        const bad = [receipt('g-agent', '2026-03-01T10:00:01Z', 'pass'), { ...existing, receipt: '{}' }];
        const good = [receipt('g-agent', '2026-03-01T10:00:02Z', 'pass'), receipt('g-agent', '2026-03-01T10:00:03Z', 'fail')];
        const single = receipt('g-agent', '2026-03-01T10:00:04Z', 'pass');
        // Issued in the same turn, so they share one commit.
        const outcomes = await Promise.allSettled([s.saveReceipts(bad), s.saveReceipts(good), s.saveReceipt(single), s.takeAllowance('g', '2026-03-01', 10, 4)]);
        expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
        expect(await s.getReceipt(bad[0]!.verificationId)).toBeNull();
        for (const r of [...good, single]) expect(await s.getReceipt(r.verificationId)).toBe(r.receipt);
        expect((await s.reputation('g-agent', { limit: 10 })).verifications).toBe(4);
        expect((await s.peekAllowance('g', '2026-03-01', 10)).used).toBe(4);
      } finally {
        await s.close();
      }
    });
  }

  // Under steady load the writer never finds the WAL fully checkpointed, so SQLite alone never starts it over.
  it('worker writer: under writes that never pause, the WAL is started over past its bound (and without a bound it only grows)', async () => {
    const payload = 'x'.repeat(2000);
    const walSizes = async (walLimitBytes: number): Promise<{ sizes: number[]; restarts: number; restartSeconds: number }> => {
      const f = join(dir, 'wal-bound', `${walLimitBytes}.db`);
      // Not given its full size at the start: the test watches it grow.
      const s = createSqliteOffloadStore({ file: f, walLimitBytes, preallocateWal: false });
      const sizes: number[] = [];
      let restarts = 0;
      let restartSeconds = 0;
      try {
        // Both threads up first (a save answered by the writer, a queue read by the checkpointer): the 1.5 s
        // of writes below must not be spent starting them (from the sources, each compiles its modules).
        await Promise.all([s.saveReceipt(receipt('wal-agent', '2026-03-01T10:00:00Z', 'pass')), s.logPending(1)]);
        const until = Date.now() + 1500;
        // Eight writers, each issuing its next receipt as soon as the last one is stored: a commit is always due.
        const writers = Array.from({ length: 8 }, async () => {
          while (Date.now() < until) await s.saveReceipt(receipt('wal-agent', '2026-03-01T10:00:00Z', 'pass', { receipt: payload }));
        });
        const sampler = (async () => {
          while (Date.now() < until) {
            await new Promise((r) => setTimeout(r, 20));
            try {
              sizes.push(statSync(`${f}-wal`).size);
            } catch {
              // Not created yet.
            }
          }
        })();
        await Promise.all([...writers, sampler]);
        const h = s.walRestarts();
        expect(h.counts).toHaveLength(h.bounds.length + 1);
        restarts = h.counts.reduce((a, b) => a + b, 0);
        restartSeconds = h.sum;
      } finally {
        await s.close();
      }
      return { sizes, restarts, restartSeconds };
    };
    const shrank = (sizes: number[]) => sizes.some((size, i) => i > 0 && size < (sizes[i - 1] as number));
    const bounded = await walSizes(256 * 1024);
    const unbounded = await walSizes(1024 * 1024 * 1024);
    expect(unbounded.sizes.length).toBeGreaterThan(10);
    // The control: the same load with a bound it never reaches — the file only ever grows, and never started over.
    expect(shrank(unbounded.sizes)).toBe(false);
    expect(unbounded.restarts).toBe(0);
    // With a bound it is cut back while the writes go on, and ends far below the unbounded file.
    expect(shrank(bounded.sizes)).toBe(true);
    expect(bounded.sizes[bounded.sizes.length - 1]).toBeLessThan((unbounded.sizes[unbounded.sizes.length - 1] as number) / 2);
    // Each start-over is timed (walRestarts(), /metrics): it is the one moment the checkpointer holds every write back.
    expect(bounded.restarts).toBeGreaterThan(0);
    expect(bounded.restartSeconds).toBeGreaterThan(0);
  }, 20_000);

  it('worker writer: a reader holding an old snapshot does not hold the writes back while the WAL is past its bound', async () => {
    const f = join(dir, 'wal-reader', 'verifier.db');
    const s = createSqliteOffloadStore({ file: f, walLimitBytes: 64 * 1024 });
    const reader = new Database(f);
    const payload = 'x'.repeat(2000);
    const save = () => s.saveReceipt(receipt('wal-agent', '2026-03-01T10:00:00Z', 'pass', { receipt: payload }));
    try {
      for (let i = 0; i < 100; i++) await save();
      // A read transaction on a snapshot that the writes below leave behind (a long query, a backup).
      reader.prepare('BEGIN').run();
      expect((reader.prepare('SELECT count(*) AS n FROM receipts').get() as { n: number }).n).toBe(100);
      let slowest = 0;
      const until = Date.now() + 1500;
      while (Date.now() < until) {
        const t = performance.now();
        await save();
        slowest = Math.max(slowest, performance.now() - t);
      }
      // A RESTART checkpoint waits for that reader while it holds the writer back; it gives up within 50 ms.
      expect(slowest).toBeLessThan(1000);
      expect((reader.prepare('SELECT count(*) AS n FROM receipts').get() as { n: number }).n).toBe(100);
    } finally {
      if (reader.inTransaction) reader.prepare('COMMIT').run();
      reader.close();
      await s.close();
    }
  }, 30_000);

  // SQLite syncs the database file only when a checkpoint copies every frame; under load only a WAL start-over does,
  // while holding every write back. So the checkpointer syncs the file after its copies, through its own descriptor.
  it.skipIf(!existsSync('/proc/self/fd'))('worker writer: the checkpointer syncs the database file through a descriptor of its own, closed with the store', async () => {
    const f = join(dir, 'db-sync', 'verifier.db');
    mkdirSync(dirname(f), { recursive: true });
    // This process's descriptors of the database file, and how many of them are read-only: SQLite's connections open it
    // for reading and writing, the checkpointer's descriptor for its syncs only for reading.
    const descriptors = (): { all: number; readOnly: number } => {
      let all = 0;
      let readOnly = 0;
      for (const fd of readdirSync('/proc/self/fd')) {
        try {
          if (readlinkSync(`/proc/self/fd/${fd}`) !== f) continue;
          all++;
          const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
          if (flags !== undefined && (parseInt(flags, 8) & 3) === 0) readOnly++;
        } catch {
          // Closed meanwhile.
        }
      }
      return { all, readOnly };
    };
    const s = createSqliteOffloadStore({ file: f });
    let synced = false;
    try {
      for (let i = 0; i < 20; i++) await s.saveReceipt(receipt('agent-db-sync', `2026-11-30T00:00:${String(i).padStart(2, '0')}Z`, 'pass'));
      // The next checkpoint tick (every 200 ms) copies those frames into the file and then syncs it.
      const until = Date.now() + 5000;
      while (!synced && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
        synced = descriptors().readOnly === 1;
      }
    } finally {
      await s.close();
    }
    expect(synced).toBe(true);
    expect(descriptors()).toEqual({ all: 0, readOnly: 0 });
  });

  it('worker writer: every WAL sync that made receipts durable is counted in walSyncs()', async () => {
    const s = createSqliteOffloadStore({ file: join(dir, 'syncs', 'verifier.db') });
    try {
      expect(s.walSyncs().counts.reduce((a, b) => a + b, 0)).toBe(0);
      // One at a time (each its own commit and sync), then 20 at once (one or a few syncs for all).
      for (let i = 0; i < 5; i++) await s.saveReceipt(receipt('agent-sync', `2026-11-30T00:00:0${i}Z`, 'pass'));
      const one = s.walSyncs();
      expect(one.counts.reduce((a, b) => a + b, 0)).toBe(5);
      await Promise.all(Array.from({ length: 20 }, (_, i) => s.saveReceipt(receipt('agent-sync', `2026-11-30T00:01:${String(i).padStart(2, '0')}Z`, 'pass'))));
      const all = s.walSyncs();
      const count = all.counts.reduce((a, b) => a + b, 0);
      expect(count).toBeGreaterThan(5);
      expect(count).toBeLessThan(25);
      expect(all.counts).toHaveLength(all.bounds.length + 1);
      expect(all.sum).toBeGreaterThan(one.sum);
      // Allowance writes are not synced on their own: no more syncs.
      await s.consumeAllowance('c-sync', '2026-11-30', 10);
      expect(s.walSyncs().counts.reduce((a, b) => a + b, 0)).toBe(count);
    } finally {
      await s.close();
    }
  });

  it('worker writer: a write waiting for the lock goes ahead as soon as it is released, not at the busy handler\'s next step', async () => {
    const f = join(dir, 'lock-wait', 'verifier.db');
    // NORMAL: the save resolves at its commit, so the delay measured is the wait for the lock alone.
    const s = createSqliteOffloadStore({ file: f, synchronous: 'NORMAL' });
    const other = new Database(f);
    const save = () => s.saveReceipt(receipt('lock-agent', '2026-03-01T10:00:00Z', 'pass')).then(() => performance.now());
    const delays: number[] = [];
    try {
      await save();
      for (let i = 0; i < 5; i++) {
        // Another connection (another process, a payment write on the main connection) holds the write lock 20 ms.
        other.prepare('BEGIN IMMEDIATE').run();
        const saved = save();
        await new Promise((r) => setTimeout(r, 20));
        const released = performance.now();
        other.prepare('COMMIT').run();
        delays.push((await saved) - released);
      }
      // SQLite's own busy handler sleeps 1, 2, 5, 10, 15 ms between tries: the lock released at 20 ms was taken at 33 ms.
      delays.sort((a, b) => a - b);
      expect(delays[2]).toBeLessThan(8);
    } finally {
      if (other.inTransaction) other.prepare('ROLLBACK').run();
      other.close();
      await s.close();
    }
  }, 20_000);

  it('worker writer: writeWaits() times each call until its answer, by what it wrote, including a wait for the write lock', async () => {
    const f = join(dir, 'waits', 'verifier.db');
    const s = createSqliteOffloadStore({ file: f });
    const other = new Database(f);
    const total = (h: { counts: number[] }) => h.counts.reduce((a, b) => a + b, 0);
    try {
      const none = s.writeWaits();
      expect([total(none.allowance), total(none.receipt), total(none.log)]).toEqual([0, 0, 0]);
      for (let i = 0; i < 3; i++) await s.saveReceipt(receipt('agent-wait', `2026-11-30T00:00:0${i}Z`, 'pass'));
      await s.consumeAllowance('c-wait', '2026-11-30', 10);
      await s.refundAllowance('c-wait', '2026-11-30');
      await s.saveReceipts([receipt('agent-wait', '2026-11-30T00:01:00Z', 'fail'), receipt('agent-wait', '2026-11-30T00:01:01Z', 'pass')]);
      const some = s.writeWaits();
      // One observation per call, not per row: the batch of two is one wait.
      expect([total(some.allowance), total(some.receipt), total(some.log)]).toEqual([2, 4, 0]);
      expect(some.receipt.counts).toHaveLength(some.receipt.bounds.length + 1);
      expect(some.receipt.sum).toBeGreaterThan(0);
      // Another connection holds the write lock 60 ms: the save waits for it, and its wait lands past 50 ms.
      other.prepare('BEGIN IMMEDIATE').run();
      const saved = s.saveReceipt(receipt('agent-wait', '2026-11-30T00:02:00Z', 'pass'));
      await new Promise((r) => setTimeout(r, 60));
      other.prepare('COMMIT').run();
      await saved;
      const after = s.writeWaits();
      // (The first call of all also waited for the writer thread to start, so it may be past 50 ms too.)
      const over50ms = (h: { bounds: readonly number[]; counts: number[] }) => h.counts.slice(h.bounds.findIndex((x) => x >= 0.05) + 1).reduce((a, b) => a + b, 0);
      expect(over50ms(after.receipt) - over50ms(some.receipt)).toBe(1);
      expect(total(after.receipt)).toBe(5);
      expect(after.receipt.sum - some.receipt.sum).toBeGreaterThanOrEqual(0.05);
      // A copy: reading it again does not change what was read.
      expect(total(some.receipt)).toBe(4);
    } finally {
      if (other.inTransaction) other.prepare('ROLLBACK').run();
      other.close();
      await s.close();
    }
  }, 20_000);

  it('processes opening a fresh file at the same instant migrate it once', async () => {
    const fresh = join(dir, 'race', 'fresh.db');
    const outs = await raceWorkers<{ versions: number[] }>(3, ['open', fresh]);
    for (const o of outs) expect(o.versions).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
    const s = createSqliteStore({ file: fresh });
    expect((await s.peekAllowance('open-race', '2026-01-01', 1000)).used).toBe(3);
    await s.close();
  });

  const killed = async (name: string, writer: string[]): Promise<void> => {
    const killFile = join(dir, name);
    await createSqliteStore({ file: killFile }).close();
    const child = spawn(process.execPath, ['--import', 'tsx', worker, 'save', killFile, 'agent-k', ...writer], { cwd: resolve(here, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
    const acknowledged: string[] = [];
    let buffer = '';
    await new Promise<void>((done, fail) => {
      child.on('error', fail);
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString('utf8');
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        acknowledged.push(...lines.filter(Boolean));
        if (acknowledged.length >= 200 && !child.killed) {
          child.kill('SIGKILL');
          done();
        }
      });
    });
    await new Promise((r) => child.once('exit', r));
    const s = createSqliteStore({ file: killFile });
    try {
      for (const id of acknowledged) expect(JSON.parse((await s.getReceipt(id)) ?? 'null')?.id).toBe(id);
      expect((await s.reputation('agent-k', { limit: 1 })).verifications).toBeGreaterThanOrEqual(acknowledged.length);
    } finally {
      await s.close();
    }
  };

  it('every receipt whose save resolved survives kill -9 of the writing process', async () => {
    await killed('kill.db', []);
  });

  // The WAL is given its full size as zeros at the start: recovery must still stop at the last frame written.
  it('worker writer: every receipt whose save resolved survives kill -9, the WAL written over its zeros', async () => {
    await killed('kill-worker.db', ['worker', String(4 * 1024 * 1024)]);
  });

  it('worker writer: the WAL has its full size from the start, and what is written into it reads back after a restart', async () => {
    const f = join(dir, 'prealloc', 'verifier.db');
    const walLimitBytes = 2 * 1024 * 1024;
    const s = createSqliteOffloadStore({ file: f, walLimitBytes });
    const ids: string[] = [];
    try {
      await s.consumeAllowance('prealloc', '2026-01-01', 10);
      // Before any receipt, the file already has its bound's size (the writer prepared it at its start).
      expect(statSync(`${f}-wal`).size).toBe(walLimitBytes);
      for (let i = 0; i < 40; i++) {
        const r = receipt('agent-z', `2026-03-01T10:00:${String(i).padStart(2, '0')}Z`, 'pass');
        ids.push(r.verificationId);
        await s.saveReceipt(r);
      }
      expect(statSync(`${f}-wal`).size).toBe(walLimitBytes);
    } finally {
      await s.close();
    }
    const again = createSqliteStore({ file: f });
    try {
      for (const id of ids) expect(await again.getReceipt(id)).not.toBeNull();
      expect((await again.reputation('agent-z', { limit: 1 })).verifications).toBe(40);
    } finally {
      await again.close();
    }
    // Switched off, the file is left to grow as SQLite writes it.
    const g = join(dir, 'prealloc-off', 'verifier.db');
    const off = createSqliteOffloadStore({ file: g, walLimitBytes, preallocateWal: false });
    try {
      await off.consumeAllowance('prealloc', '2026-01-01', 10);
      expect(statSync(`${g}-wal`).size).toBeLessThan(walLimitBytes / 4);
    } finally {
      await off.close();
    }
  });

  it('runs in WAL mode with synchronous=FULL by default', async () => {
    const s = createSqliteStore({ file: join(dir, 'pragma.db') });
    await s.close();
    const { createRequire } = await import('node:module');
    const Database = createRequire(import.meta.url)('better-sqlite3') as new (f: string) => { pragma(s: string, o: { simple: true }): unknown; close(): void };
    const db = new Database(join(dir, 'pragma.db'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('openStore without a URL creates <dataDir>/verifier.db', async () => {
    const dataDir = join(dir, 'data', 'sub');
    const s = await openStore({ dataDir, databaseUrl: null });
    await s.saveReceipt({ verificationId: 'v', agentId: null, taskId: 't', result: 'pass', overallRatio: 1, verifiedAt: '2026-01-01T00:00:00Z', keyVersion: 'k', receipt: '{}' });
    await s.close();
    const again = createSqliteStore({ file: join(dataDir, 'verifier.db') });
    expect(await again.getReceipt('v')).toBe('{}');
    await again.close();
  });

  it('openStore refuses a URL that is neither empty nor PostgreSQL', async () => {
    await expect(openStore({ dataDir: dir, databaseUrl: 'mysql://x' })).rejects.toThrow(/postgres/);
  });

  it('a database of version 4 keeps its log queue, in order, through migration 5, and new receipts queue after it', async () => {
    const old = join(dir, 'v4', 'verifier.db');
    mkdirSync(dirname(old), { recursive: true });
    const raw = new Database(old);
    raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const m of SQLITE_MIGRATIONS.filter((x) => x.version <= 4)) {
      raw.exec(m.sql);
      raw.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, '2026-11-30T00:00:00Z');
    }
    const insert = raw.prepare(SQLITE_WRITE_SQL.insertReceipt);
    const before = [0, 1, 2, 3].map((i) => receipt('agent-m', `2026-11-30T00:00:0${i}Z`, 'pass'));
    for (const r of before) insert.run(...receiptValues(r));
    // One already taken by the sequencer: the queue's seqs have a gap, and AUTOINCREMENT had counted past it.
    raw.prepare('DELETE FROM log_queue WHERE seq = (SELECT min(seq) FROM log_queue)').run();
    const queuedBefore = raw.prepare('SELECT seq, verification_id FROM log_queue ORDER BY seq').all() as Array<{ seq: number; verification_id: string }>;
    raw.close();
    expect(queuedBefore.map((q) => q.verification_id)).toEqual(before.slice(1).map((r) => r.verificationId));

    const s = createSqliteStore({ file: old });
    try {
      const after = [4, 5].map((i) => receipt('agent-m', `2026-11-30T00:00:0${i}Z`, 'fail'));
      for (const r of after) await s.saveReceipt(r);
      const check = new Database(old);
      const queued = check.prepare('SELECT seq, verification_id FROM log_queue ORDER BY seq').all() as Array<{ seq: number; verification_id: string }>;
      const versions = (check.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>).map((v) => v.version);
      const autoincrement = check.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'log_queue' AND sql LIKE '%AUTOINCREMENT%'").get() as { n: number };
      check.close();
      expect(versions).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
      expect(autoincrement.n).toBe(0);
      // The rows that were queued keep their seqs; the new ones come after them, in storage order.
      expect(queued.slice(0, 3)).toEqual(queuedBefore);
      expect(queued.map((q) => q.verification_id)).toEqual([...before.slice(1), ...after].map((r) => r.verificationId));
      expect(queued.every((q, i) => i === 0 || q.seq > (queued[i - 1] as { seq: number }).seq)).toBe(true);
      // The history still reads newest first from the re-created index.
      const page = await s.reputation('agent-m', { limit: 3 });
      expect(page.history.map((h) => h.verification_id)).toEqual([after[1], after[0], before[3]].map((r) => r!.verificationId));
      const rest = await s.reputation('agent-m', { limit: 3, cursor: page.next_cursor });
      expect(rest.history.map((h) => h.verification_id)).toEqual([before[2], before[1], before[0]].map((r) => r!.verificationId));
    } finally {
      await s.close();
    }
  });

  it('a receipt committed on its own writes at most 7 pages to the WAL (8.3 before migration 5)', async () => {
    const lean = join(dir, 'pages', 'verifier.db');
    await createSqliteStore({ file: lean }).close();
    const raw = new Database(lean);
    try {
      raw.pragma('wal_autocheckpoint = 0');
      const insert = raw.prepare(SQLITE_WRITE_SQL.insertReceipt);
      // A receipt of the size the service issues for a small request (~2.3 kB), one agent, one commit each.
      const text = 'x'.repeat(2300);
      let ms = Date.parse('2026-11-30T00:00:00Z');
      const put = (n: number): void => {
        for (let i = 0; i < n; i++) insert.run(...receiptValues(receipt('agent-p', new Date((ms += 1000)).toISOString().replace(/\.\d+Z$/, 'Z'), 'pass', { receipt: text })));
      };
      put(300); // past the first pages of every tree
      const frames = (): number => (statSync(lean + '-wal').size - 32) / (4096 + 24);
      const start = frames();
      put(1000);
      const perReceipt = (frames() - start) / 1000;
      expect(perReceipt).toBeGreaterThan(3); // the receipt's own page, its two index entries and the queue row at least
      expect(perReceipt).toBeLessThan(7);
    } finally {
      raw.close();
    }
  });
});
