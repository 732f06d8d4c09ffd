/**
 * @module The transparency log's two hot operations on a SQLite connection of a worker thread: the
 * append transaction and the read of the queue. The log appender (log-appender-worker.ts), the
 * receipt writer (sqlite-writer-worker.ts, which commits appends on the same connection as the
 * receipts, so the two never wait for each other's write lock) and the checkpointer
 * (sqlite-checkpointer-worker.ts, which serves the queue read beside the writer) all run these.
 */
import { entryText, receiptSha256 } from '../log/entry.js';
import type { LogAppendBatch, LogPendingReceipt } from './log-store.js';
import type { WorkerDatabase } from './sqlite-worker-protocol.js';

/** The queued receipts in storage order, with what their entries need (null columns: the receipt is gone). Param: limit. */
export const LOG_PENDING_SQL = `SELECT q.seq, q.verification_id AS queued_id, r.verification_id, r.agent_id, r.task_id, r.result, r.overall_ratio, r.verified_at, r.key_version, r.receipt
       FROM log_queue q LEFT JOIN receipts r ON r.verification_id = q.verification_id ORDER BY q.seq LIMIT ?`;

/**
 * The append transaction: the compare-and-swap on the tree size, the entries, the nodes, the dequeue and
 * the new head, all or nothing. False when the tree no longer has the batch's expected size.
 */
export function createLogAppend(db: WorkerDatabase): ((batch: LogAppendBatch) => boolean) & { immediate(batch: LogAppendBatch): boolean } {
  const size = db.prepare('SELECT size FROM log_head WHERE id = 1');
  const insEntry = db.prepare('INSERT INTO log_entries (idx, verification_id, entry) VALUES (?, ?, ?)');
  const insNode = db.prepare('INSERT INTO log_nodes (level, idx, hash) VALUES (?, ?, ?)');
  const deq = db.prepare('DELETE FROM log_queue WHERE seq = ?');
  const head = db.prepare('UPDATE log_head SET size = ?, root = ?, note = ?, updated_at = ? WHERE id = 1');
  return db.transaction((b: LogAppendBatch): boolean => {
    if ((size.get() as { size: number }).size !== b.expectedSize) return false;
    for (const e of b.entries) insEntry.run(e.index, e.verificationId, e.entry);
    for (const n of b.nodes) insNode.run(n.level, n.index, Buffer.from(n.hash));
    for (const s of b.dequeue) {
      if (deq.run(s).changes !== 1) throw new Error('log queue row ' + s + ' is gone: another sequencer took it');
    }
    head.run(b.head.size, Buffer.from(b.head.root), b.head.note, new Date().toISOString());
    return true;
  });
}

/** A row of LOG_PENDING_SQL; the receipt's columns are null when the receipt is gone. */
interface PendingRow {
  seq: number;
  queued_id: string;
  verification_id: string | null;
  task_id: string;
  agent_id: string | null;
  result: string;
  overall_ratio: number;
  verified_at: string;
  receipt: string;
}

/**
 * The log's queue read, off the HTTP thread: each queued receipt's entry encoded and the receipt hashed
 * here (the same entryText and receiptSha256 the sequencer uses), so only the entries cross back.
 */
export function createLogPending(db: WorkerDatabase): (limit: number) => LogPendingReceipt[] {
  const pending = db.prepare(LOG_PENDING_SQL);
  return (limit) =>
    (pending.all(limit) as PendingRow[]).map((r): LogPendingReceipt =>
      r.verification_id === null
        ? { seq: r.seq, verificationId: r.queued_id, record: null }
        : {
            seq: r.seq,
            verificationId: r.queued_id,
            record: null,
            entry: entryText(r.verification_id, r.task_id, r.agent_id, r.result, r.overall_ratio, r.verified_at, receiptSha256(r.receipt)),
          },
    );
}
