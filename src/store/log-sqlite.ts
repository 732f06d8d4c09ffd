/**
 * @module The transparency-log tables of the embedded SQLite store. Reads use
 * the store's main connection (WAL readers never wait for the writer). Appends
 * — many rows and a commit with a disk sync — run on a worker thread with its
 * own connection, so neither the rows nor the sync ever stop the event loop,
 * and the compare-and-swap on the tree size happens inside that connection's
 * IMMEDIATE transaction, where SQLite's single writer lock serializes every
 * thread and process sharing the file (log-appender-worker.ts).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { LOG_PENDING_SQL } from './log-sqlite-ops.js';
import type { LogAppendBatch, LogAuditRow, LogHead, LogNodeId, LogPendingReceipt, ReceiptRow, TransparencyLogStore } from './log-store.js';
import { recordOfRow } from './log-store.js';
import { workerModule, type AppenderData, type AppenderMessage, type AppenderReply } from './sqlite-worker-protocol.js';

/** The part of better-sqlite3 used here (mirrors src/store/sqlite.ts). */
interface Statement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface Database {
  prepare(sql: string): Statement;
}

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
    const { filename, argv } = workerModule('log-appender-worker');
    const w = new Worker(filename, {
      argv,
      workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), file: options.file, busyTimeoutMs: options.busyTimeoutMs } satisfies AppenderData,
    });
    w.unref();
    w.on('message', (m: AppenderReply) => {
      if (m === 'closed') return;
      const p = waiting.get(m.id);
      if (!p) return;
      waiting.delete(m.id);
      if (m.ok) p.resolve(Boolean(m.value));
      else p.reject(new Error(m.message));
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
        appender().postMessage({ id, batch } satisfies AppenderMessage);
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
        w.postMessage('close' satisfies AppenderMessage);
      });
      await w.terminate().catch(() => undefined);
    },
  };
}
