/**
 * @module The transparency-log tables of the embedded SQLite store. Reads use
 * the store's main connection (WAL readers never wait for the writer). Appends
 * — many rows and a commit with a disk sync — run on a worker thread with its
 * own connection, so neither the rows nor the sync ever stop the event loop,
 * and the compare-and-swap on the tree size happens inside that connection's
 * IMMEDIATE transaction, where SQLite's single writer lock serializes every
 * thread and process sharing the file.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { LogAppendBatch, LogAuditRow, LogHead, LogNodeId, LogPendingReceipt, ReceiptRow, TransparencyLogStore } from './log-store.js';
import { recordOfRow } from './log-store.js';

/** The part of better-sqlite3 used here (mirrors src/store/sqlite.ts). */
interface Statement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface Database {
  prepare(sql: string): Statement;
}

/** The queued receipts in storage order, with what their entries need (null columns: the receipt is gone). Param: limit. */
export const LOG_PENDING_SQL = `SELECT q.seq, q.verification_id AS queued_id, r.verification_id, r.agent_id, r.task_id, r.result, r.overall_ratio, r.verified_at, r.key_version, r.receipt
       FROM log_queue q LEFT JOIN receipts r ON r.verification_id = q.verification_id ORDER BY q.seq LIMIT ?`;

/**
 * The append transaction as CommonJS source (a function of a better-sqlite3 connection): the
 * compare-and-swap on the tree size, the entries, the nodes, the dequeue and the new head, all or
 * nothing. Evaluated by this module's appender thread and by the SQLite writer thread
 * (sqlite-offload.ts), which commits appends on the same connection as the receipts, so the two
 * never wait for each other's write lock.
 */
export const LOG_APPEND_SOURCE = `
function createLogAppend(db) {
  const size = db.prepare('SELECT size FROM log_head WHERE id = 1');
  const insEntry = db.prepare('INSERT INTO log_entries (idx, verification_id, entry) VALUES (?, ?, ?)');
  const insNode = db.prepare('INSERT INTO log_nodes (level, idx, hash) VALUES (?, ?, ?)');
  const deq = db.prepare('DELETE FROM log_queue WHERE seq = ?');
  const head = db.prepare('UPDATE log_head SET size = ?, root = ?, note = ?, updated_at = ? WHERE id = 1');
  return db.transaction((b) => {
    if (size.get().size !== b.expectedSize) return false;
    for (const e of b.entries) insEntry.run(e.index, e.verificationId, e.entry);
    for (const n of b.nodes) insNode.run(n.level, n.index, Buffer.from(n.hash));
    for (const s of b.dequeue) {
      if (deq.run(s).changes !== 1) throw new Error('log queue row ' + s + ' is gone: another sequencer took it');
    }
    head.run(b.head.size, Buffer.from(b.head.root), b.head.note, new Date().toISOString());
    return true;
  });
}
`;

// Plain CommonJS evaluated in the worker, like the receipt writer in sqlite-offload.ts.
const APPENDER_SOURCE = LOG_APPEND_SOURCE + `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs });
db.pragma('busy_timeout = ' + Math.trunc(workerData.busyTimeoutMs));
db.pragma('journal_mode = WAL');
// A published checkpoint must never be lost (a lost one could be re-signed differently: a fork), so an append
// is answered only once its WAL frames are on disk. As in the receipt writer, the commit itself does not sync
// (synchronous=NORMAL) and the WAL file is synced right after, outside the write lock: the receipt writer
// never waits for this thread's disk sync.
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
const walFile = workerData.file + '-wal';
const append = createLogAppend(db);
function syncWal(done) {
  fs.open(walFile, 'r', (e, fd) => {
    if (e) return done(e);
    fs.fdatasync(fd, (e2) => fs.close(fd, () => done(e2)));
  });
}
parentPort.on('message', (m) => {
  if (m === 'close') { db.close(); parentPort.postMessage('closed'); parentPort.close(); return; }
  let value;
  try {
    value = append.immediate(m.batch);
  } catch (e) {
    parentPort.postMessage({ id: m.id, ok: false, message: String((e && e.message) || e) });
    return;
  }
  if (!value) { parentPort.postMessage({ id: m.id, ok: true, value }); return; }
  syncWal((e) => parentPort.postMessage(e ? { id: m.id, ok: false, message: 'log append not synced: ' + e.message } : { id: m.id, ok: true, value }));
});
`;

export interface SqliteLogOptions {
  file: string;
  busyTimeoutMs: number;
}

export interface SqliteLog extends TransparencyLogStore {
  close(): Promise<void>;
}

export function createSqliteLog(db: Database, options: SqliteLogOptions): SqliteLog {
  const s = {
    pending: db.prepare(LOG_PENDING_SQL),
    head: db.prepare('SELECT size, root, note FROM log_head WHERE id = 1'),
    node: db.prepare('SELECT hash FROM log_nodes WHERE level = ? AND idx = ?'),
    nodeRange: db.prepare('SELECT hash FROM log_nodes WHERE level = ? AND idx >= ? AND idx < ? ORDER BY idx'),
    entries: db.prepare('SELECT entry FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx'),
    entryOf: db.prepare('SELECT idx, entry FROM log_entries WHERE verification_id = ?'),
    audit: db.prepare(
      `SELECT e.idx, e.verification_id AS logged_id, e.entry, n.hash AS leaf,
              r.verification_id, r.agent_id, r.task_id, r.result, r.overall_ratio, r.verified_at, r.key_version, r.receipt
       FROM log_entries e
       LEFT JOIN log_nodes n ON n.level = 0 AND n.idx = e.idx
       LEFT JOIN receipts r ON r.verification_id = e.verification_id
       WHERE e.idx >= ? ORDER BY e.idx LIMIT ?`,
    ),
    agentResults: db.prepare(
      `SELECT r.result, r.verified_at FROM receipts r JOIN log_entries e ON e.verification_id = r.verification_id
       WHERE r.agent_id = ? AND e.idx < ? ORDER BY r.verified_ms ASC, r.verification_id ASC`,
    ),
    unlogged: db.prepare(
      `SELECT r.verification_id, EXISTS (SELECT 1 FROM log_queue q WHERE q.verification_id = r.verification_id) AS queued
       FROM receipts r WHERE NOT EXISTS (SELECT 1 FROM log_entries e WHERE e.verification_id = r.verification_id) LIMIT ?`,
    ),
  };

  let worker: Worker | null = null;
  let nextId = 1;
  const waiting = new Map<number, { resolve(v: boolean): void; reject(e: Error): void }>();
  let closed = false;
  const appender = (): Worker => {
    if (worker) return worker;
    const w = new Worker(APPENDER_SOURCE, {
      eval: true,
      workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), file: options.file, busyTimeoutMs: options.busyTimeoutMs },
    });
    w.unref();
    w.on('message', (m: { id: number; ok: boolean; value?: boolean; message?: string } | 'closed') => {
      if (m === 'closed') return;
      const p = waiting.get(m.id);
      if (!p) return;
      waiting.delete(m.id);
      if (m.ok) p.resolve(Boolean(m.value));
      else p.reject(new Error(m.message ?? 'log append failed'));
    });
    const fail = (e: Error) => {
      for (const p of waiting.values()) p.reject(e);
      waiting.clear();
      worker = null;
    };
    w.on('error', (e) => fail(e instanceof Error ? e : new Error(String(e))));
    w.on('exit', () => fail(new Error('the log writer stopped')));
    worker = w;
    return w;
  };

  return {
    async logPending(limit) {
      const rows = s.pending.all(limit) as Array<ReceiptRow & { seq: number; queued_id: string; verification_id: string | null }>;
      return rows.map(
        (r): LogPendingReceipt => ({ seq: r.seq, verificationId: r.queued_id, record: r.verification_id === null ? null : recordOfRow(r as ReceiptRow) }),
      );
    },

    async logHead(): Promise<LogHead> {
      const r = s.head.get() as { size: number; root: Buffer; note: string };
      return { size: r.size, root: Buffer.from(r.root), note: r.note };
    },

    async logNodes(ids: readonly LogNodeId[]) {
      return ids.map((id) => {
        const r = s.node.get(id.level, id.index) as { hash: Buffer } | undefined;
        if (!r) throw new Error(`log node ${id.level}/${id.index} is missing`);
        return Buffer.from(r.hash);
      });
    },

    async logNodeRange(level, from, to) {
      return (s.nodeRange.all(level, from, to) as Array<{ hash: Buffer }>).map((r) => Buffer.from(r.hash));
    },

    async logEntries(from, to) {
      return (s.entries.all(from, to) as Array<{ entry: string }>).map((r) => r.entry);
    },

    async logEntryOf(verificationId) {
      const r = s.entryOf.get(verificationId) as { idx: number; entry: string } | undefined;
      return r ? { index: r.idx, entry: r.entry } : null;
    },

    logAppend(batch: LogAppendBatch): Promise<boolean> {
      if (closed) return Promise.reject(new Error('the store is closed'));
      return new Promise<boolean>((resolve, reject) => {
        const id = nextId++;
        waiting.set(id, { resolve, reject });
        appender().postMessage({ id, batch });
      });
    },

    async logAuditPage(from, limit): Promise<LogAuditRow[]> {
      const rows = s.audit.all(from, limit) as Array<ReceiptRow & { idx: number; logged_id: string; entry: string; leaf: Buffer | null; verification_id: string | null }>;
      return rows.map((r) => ({
        index: r.idx,
        verificationId: r.logged_id,
        entry: r.entry,
        leaf: r.leaf ? Buffer.from(r.leaf) : null,
        receipt: r.verification_id === null ? null : recordOfRow(r as ReceiptRow),
      }));
    },

    async logAgentResults(agentId, treeSize) {
      return (s.agentResults.all(agentId, treeSize) as Array<{ result: 'pass' | 'fail'; verified_at: string }>).map((r) => ({ result: r.result, verifiedAt: r.verified_at }));
    },

    async logUnlogged(limit) {
      return (s.unlogged.all(limit) as Array<{ verification_id: string; queued: number }>).map((r) => ({ verificationId: r.verification_id, queued: r.queued === 1 }));
    },

    async close() {
      if (closed) return;
      closed = true;
      const w = worker;
      if (!w) return;
      // Appends already posted are answered first: the worker takes messages in order.
      await new Promise<void>((resolve) => {
        w.on('message', (m) => m === 'closed' && resolve());
        w.on('exit', () => resolve());
        w.postMessage('close');
      });
      await w.terminate().catch(() => undefined);
    },
  };
}
