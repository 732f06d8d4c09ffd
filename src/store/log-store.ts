/**
 * @module What the stores keep for the transparency log (src/log): a queue of
 * stored receipts not yet in the tree (filled by a trigger in the same
 * transaction as the receipt's insert, so no write path can forget it), the
 * entries and stored Merkle nodes of the tree (append-only; the sequencer stores the
 * levels tiles serve, every 8th, and proofs hash the others up), and the head: the
 * size, root and signed checkpoint. A batch is appended only if the tree still
 * has the size its writer read (compare-and-swap under the database's write
 * lock), so concurrent sequencers — threads, processes or instances — can
 * never fork the tree or leave a gap.
 */
import type { ReceiptRecord } from './store.js';

export interface LogNodeId {
  level: number;
  index: number;
}

export interface LogPendingReceipt {
  /** Queue position: storage order. */
  seq: number;
  verificationId: string;
  /** Null when the receipt row is gone (deleted before it was logged), or when `entry` is given instead. */
  record: ReceiptRecord | null;
  /** The entry, already encoded by the store (the SQLite writer thread does it); absent: encode it from `record`. */
  entry?: string;
}

export interface LogHead {
  size: number;
  root: Buffer;
  /** The signed checkpoint of this size and root; empty before the first one is signed. */
  note: string;
}

export interface LogAppendBatch {
  /** The size the batch was computed from; the append fails (false) when the tree has moved. */
  expectedSize: number;
  entries: Array<{ index: number; verificationId: string; entry: string }>;
  nodes: Array<{ level: number; index: number; hash: Buffer }>;
  /** Queue rows integrated (or dropped because their receipt is gone). */
  dequeue: number[];
  head: LogHead;
}

export interface LogAuditRow {
  index: number;
  verificationId: string;
  entry: string;
  /** The stored level-0 node of this index. */
  leaf: Buffer | null;
  /** The receipt row it was made from; null when it is gone. */
  receipt: ReceiptRecord | null;
}

export interface TransparencyLogStore {
  /** Up to `limit` queued receipts, oldest first. */
  logPending(limit: number): Promise<LogPendingReceipt[]>;
  logHead(): Promise<LogHead>;
  /** Stored node hashes, in the order asked; throws when one is missing. */
  logNodes(ids: readonly LogNodeId[]): Promise<Buffer[]>;
  /** Hashes of nodes (level, from … to-1) that exist, ascending. */
  logNodeRange(level: number, from: number, to: number): Promise<Buffer[]>;
  /** Entry texts of indexes from … to-1 that exist, ascending. */
  logEntries(from: number, to: number): Promise<string[]>;
  /** The index and entry of a receipt, or null when it is not (yet) in the tree. */
  logEntryOf(verificationId: string): Promise<{ index: number; entry: string } | null>;
  /** Appends a batch atomically; false when the tree no longer has `expectedSize` leaves. */
  logAppend(batch: LogAppendBatch): Promise<boolean>;
  /** Entries from `from` on, with their leaf node and receipt row (for the audit). */
  logAuditPage(from: number, limit: number): Promise<LogAuditRow[]>;
  /**
   * (result, verified_at) of an agent's receipts among the first `treeSize` log entries, oldest first:
   * the history a trust score computed at that checkpoint covers.
   */
  logAgentResults(agentId: string, treeSize: number): Promise<Array<{ result: 'pass' | 'fail'; verifiedAt: string }>>;
  /** Stored receipts that are not in the tree: queued (waiting) or missing altogether. */
  logUnlogged(limit: number): Promise<Array<{ verificationId: string; queued: boolean }>>;
}

/** Row → record, for the queue and audit reads (same columns in both stores). */
export interface ReceiptRow {
  verification_id: string;
  agent_id: string | null;
  task_id: string;
  result: 'pass' | 'fail';
  overall_ratio: number;
  verified_at: string;
  key_version: string;
  receipt: string;
}

export function recordOfRow(r: ReceiptRow): ReceiptRecord {
  return {
    verificationId: r.verification_id,
    agentId: r.agent_id,
    taskId: r.task_id,
    result: r.result,
    overallRatio: Number(r.overall_ratio),
    verifiedAt: r.verified_at,
    keyVersion: r.key_version,
    receipt: r.receipt,
  };
}

