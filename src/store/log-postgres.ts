/**
 * @module The transparency-log tables of the PostgreSQL store. An append locks
 * the head row (SELECT … FOR UPDATE) and checks the tree still has the size
 * the batch was computed from, so sequencers on any number of instances are
 * serialized by the database: one sequence, no fork, no gap. The commit uses
 * synchronous_commit=on, so a checkpoint anyone has seen is durable.
 */
import type { LogAppendBatch, LogAuditRow, LogHead, LogNodeId, LogPendingReceipt, ReceiptRow, TransparencyLogStore } from './log-store.js';
import { recordOfRow } from './log-store.js';

/** A pool or a client inside a transaction: what a table module runs its statements on. */
export interface Queryable {
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** What the PostgreSQL store hands each of its table modules (the log's, the ERC-8004 queue's). */
export interface PostgresTableDeps {
  pool: Queryable;
  /** Quoted schema name. */
  q: string;
  transaction<T>(fn: (c: Queryable) => Promise<T>): Promise<T>;
}

const RECEIPT_FIELDS = 'r.verification_id, r.agent_id, r.task_id, r.result, r.overall_ratio, r.verified_at, r.key_version, r.receipt';

export function createPostgresLog({ pool, q, transaction }: PostgresTableDeps): TransparencyLogStore {
  return {
    async logPending(limit) {
      const r = await pool.query<ReceiptRow & { seq: string; queued_id: string; verification_id: string | null }>(
        `SELECT q.seq, q.verification_id AS queued_id, ${RECEIPT_FIELDS}
         FROM ${q}.log_queue q LEFT JOIN ${q}.receipts r ON r.verification_id = q.verification_id ORDER BY q.seq LIMIT $1`,
        [limit],
      );
      return r.rows.map(
        (row): LogPendingReceipt => ({
          seq: Number(row.seq),
          verificationId: row.queued_id,
          record: row.verification_id === null ? null : recordOfRow(row as ReceiptRow),
        }),
      );
    },

    async logHead(): Promise<LogHead> {
      const r = await pool.query<{ size: string; root: Buffer; note: string }>(`SELECT size, root, note FROM ${q}.log_head WHERE id = 1`);
      const row = r.rows[0];
      if (!row) throw new Error('the log head row is missing');
      return { size: Number(row.size), root: Buffer.from(row.root), note: row.note };
    },

    async logNodes(ids: readonly LogNodeId[]) {
      if (ids.length === 0) return [];
      const r = await pool.query<{ level: number; idx: string; hash: Buffer }>(
        `SELECT level, idx, hash FROM ${q}.log_nodes WHERE (level, idx) IN (SELECT * FROM unnest($1::smallint[], $2::bigint[]))`,
        [ids.map((i) => i.level), ids.map((i) => i.index)],
      );
      const got = new Map(r.rows.map((row) => [`${row.level}/${row.idx}`, Buffer.from(row.hash)]));
      return ids.map((id) => {
        const h = got.get(`${id.level}/${id.index}`);
        if (!h) throw new Error(`log node ${id.level}/${id.index} is missing`);
        return h;
      });
    },

    async logNodeRange(level, from, to) {
      const r = await pool.query<{ hash: Buffer }>(`SELECT hash FROM ${q}.log_nodes WHERE level = $1 AND idx >= $2 AND idx < $3 ORDER BY idx`, [level, from, to]);
      return r.rows.map((row) => Buffer.from(row.hash));
    },

    async logEntries(from, to) {
      const r = await pool.query<{ entry: string }>(`SELECT entry FROM ${q}.log_entries WHERE idx >= $1 AND idx < $2 ORDER BY idx`, [from, to]);
      return r.rows.map((row) => row.entry);
    },

    async logEntryOf(verificationId) {
      const r = await pool.query<{ idx: string; entry: string }>(`SELECT idx, entry FROM ${q}.log_entries WHERE verification_id = $1`, [verificationId]);
      const row = r.rows[0];
      return row ? { index: Number(row.idx), entry: row.entry } : null;
    },

    async logAppend(batch: LogAppendBatch) {
      return transaction(async (c) => {
        await c.query('SET LOCAL synchronous_commit = on');
        const cur = await c.query<{ size: string }>(`SELECT size FROM ${q}.log_head WHERE id = 1 FOR UPDATE`);
        if (Number(cur.rows[0]?.size) !== batch.expectedSize) return false;
        if (batch.entries.length > 0) {
          await c.query(`INSERT INTO ${q}.log_entries (idx, verification_id, entry) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])`, [
            batch.entries.map((e) => e.index),
            batch.entries.map((e) => e.verificationId),
            batch.entries.map((e) => e.entry),
          ]);
        }
        if (batch.nodes.length > 0) {
          await c.query(`INSERT INTO ${q}.log_nodes (level, idx, hash) SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bytea[])`, [
            batch.nodes.map((n) => n.level),
            batch.nodes.map((n) => n.index),
            batch.nodes.map((n) => Buffer.from(n.hash)),
          ]);
        }
        if (batch.dequeue.length > 0) {
          const d = await c.query(`DELETE FROM ${q}.log_queue WHERE seq = ANY($1::bigint[])`, [batch.dequeue]);
          // Under the head lock nobody else dequeues, so a shortfall means the batch is stale: undo everything.
          if (d.rowCount !== batch.dequeue.length) throw new Error('log queue rows vanished during an append');
        }
        await c.query(`UPDATE ${q}.log_head SET size = $1, root = $2, note = $3, updated_at = now() WHERE id = 1`, [batch.head.size, batch.head.root, batch.head.note]);
        return true;
      });
    },

    async logAuditPage(from, limit): Promise<LogAuditRow[]> {
      const r = await pool.query<ReceiptRow & { idx: string; logged_id: string; entry: string; leaf: Buffer | null; verification_id: string | null }>(
        `SELECT e.idx, e.verification_id AS logged_id, e.entry, n.hash AS leaf, ${RECEIPT_FIELDS}
         FROM ${q}.log_entries e
         LEFT JOIN ${q}.log_nodes n ON n.level = 0 AND n.idx = e.idx
         LEFT JOIN ${q}.receipts r ON r.verification_id = e.verification_id
         WHERE e.idx >= $1 ORDER BY e.idx LIMIT $2`,
        [from, limit],
      );
      return r.rows.map((row) => ({
        index: Number(row.idx),
        verificationId: row.logged_id,
        entry: row.entry,
        leaf: row.leaf ? Buffer.from(row.leaf) : null,
        receipt: row.verification_id === null ? null : recordOfRow(row as ReceiptRow),
      }));
    },

    async logAgentResults(agentId, treeSize) {
      const r = await pool.query<{ result: 'pass' | 'fail'; verified_at: string }>(
        `SELECT r.result, r.verified_at FROM ${q}.receipts r JOIN ${q}.log_entries e ON e.verification_id = r.verification_id
         WHERE r.agent_id = $1 AND e.idx < $2 ORDER BY r.verified_ms ASC, r.verification_id ASC`,
        [agentId, treeSize],
      );
      return r.rows.map((row) => ({ result: row.result, verifiedAt: row.verified_at }));
    },

    async logUnlogged(limit) {
      const r = await pool.query<{ verification_id: string; queued: boolean }>(
        `SELECT r.verification_id, EXISTS (SELECT 1 FROM ${q}.log_queue lq WHERE lq.verification_id = r.verification_id) AS queued
         FROM ${q}.receipts r WHERE NOT EXISTS (SELECT 1 FROM ${q}.log_entries e WHERE e.verification_id = r.verification_id) LIMIT $1`,
        [limit],
      );
      return r.rows.map((row) => ({ verificationId: row.verification_id, queued: row.queued }));
    },
  };
}
