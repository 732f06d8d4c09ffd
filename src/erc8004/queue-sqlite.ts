/**
 * @module The ERC-8004 validation queue in the embedded SQLite store, on the
 * store's main connection: its writes are few (one per request and step), and
 * SQLite's one writer lock orders them with the writer thread's. A nonce is taken
 * in one IMMEDIATE transaction with the sender's counter.
 */
import type { ReceiptMatch, SeenRequest, ValidationPatch, ValidationQueueStore, ValidationRow, ValidationState } from './queue-store.js';
import { patchColumns, rowOf, WORK_STATES, type ValidationDbRow } from './queue-rows.js';

/** The part of better-sqlite3 used here. */
interface Statement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface Database {
  prepare(sql: string): Statement;
  exec(sql: string): void;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) & { immediate(...args: A): R };
}

const WORK_IN = WORK_STATES.map((s) => `'${s}'`).join(', ');

export function createSqliteValidationQueue(db: Database): ValidationQueueStore {
  const iso = (ms: number) => new Date(ms).toISOString();
  const s = {
    enqueue: db.prepare(
      `INSERT INTO erc8004_validations (registry, request_hash, agent_id, request_block, request_tx, state, next_attempt_ms, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'new', ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    cursor: db.prepare('SELECT next_block FROM erc8004_cursors WHERE key = ?'),
    setCursor: db.prepare(
      'INSERT INTO erc8004_cursors (key, next_block) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET next_block = max(next_block, excluded.next_block)',
    ),
    receipts: db.prepare(
      `SELECT verification_id, result, overall_ratio, receipt FROM receipts
       WHERE json_extract(receipt, '$.request_hash') = ? ORDER BY verified_ms, verification_id LIMIT ?`,
    ),
    pending: db.prepare(`SELECT 1 FROM pending_settlements WHERE state = 'pending' AND record LIKE ? LIMIT 1`),
    pick: db.prepare(
      `SELECT registry, request_hash FROM erc8004_validations
       WHERE registry = ? AND state IN (${WORK_IN}) AND next_attempt_ms <= ? AND (lease_owner IS NULL OR lease_owner = ? OR lease_until_ms < ?)
       ORDER BY nonce IS NULL, nonce, next_attempt_ms LIMIT 1`,
    ),
    lease: db.prepare('UPDATE erc8004_validations SET lease_owner = ?, lease_until_ms = ? WHERE registry = ? AND request_hash = ?'),
    one: db.prepare('SELECT * FROM erc8004_validations WHERE registry = ? AND request_hash = ?'),
    owned: db.prepare("SELECT 1 FROM erc8004_validations WHERE registry = ? AND request_hash = ? AND lease_owner = ? AND state = 'queued'"),
    takeNonce: db.prepare(
      `INSERT INTO erc8004_senders (address, next_nonce) VALUES (?, ? + 1)
       ON CONFLICT (address) DO UPDATE SET next_nonce = max(next_nonce, ?) + 1 RETURNING next_nonce - 1 AS nonce`,
    ),
    setNonce: db.prepare("UPDATE erc8004_validations SET state = 'nonced', sender = ?, nonce = ?, updated_at = ? WHERE registry = ? AND request_hash = ?"),
    release: db.prepare('UPDATE erc8004_validations SET lease_until_ms = 0 WHERE registry = ? AND request_hash = ? AND lease_owner = ?'),
    counts: db.prepare('SELECT state, count(*) AS n FROM erc8004_validations GROUP BY state'),
    ofAgent: db.prepare(
      `SELECT v.* FROM erc8004_validations v JOIN receipts r ON r.verification_id = v.verification_id
       WHERE r.agent_id = ? AND v.state = 'confirmed' ORDER BY v.answer_block DESC, v.request_hash LIMIT ?`,
    ),
  };

  const claim = db.transaction((registry: string, owner: string, nowMs: number, leaseMs: number): ValidationDbRow | null => {
    const row = s.pick.get(registry, nowMs, owner, nowMs) as { registry: string; request_hash: string } | undefined;
    if (!row) return null;
    s.lease.run(owner, nowMs + leaseMs, row.registry, row.request_hash);
    return s.one.get(row.registry, row.request_hash) as ValidationDbRow;
  });
  const assignNonce = db.transaction((registry: string, requestHash: string, owner: string, sender: string, chainNonce: number, nowMs: number): number | null => {
    if (!s.owned.get(registry, requestHash, owner)) return null;
    const { nonce } = s.takeNonce.get(sender, chainNonce, chainNonce) as { nonce: number };
    s.setNonce.run(sender, nonce, iso(nowMs), registry, requestHash);
    return nonce;
  });

  return {
    async erc8004Prepare() {
      // Only receipts in full form carry request_hash; the partial index leaves the others out.
      db.exec(
        `CREATE INDEX IF NOT EXISTS receipts_request_hash ON receipts (json_extract(receipt, '$.request_hash'))
         WHERE json_extract(receipt, '$.request_hash') IS NOT NULL`,
      );
    },
    async erc8004Enqueue(r: SeenRequest, nowMs: number) {
      return s.enqueue.run(r.registry, r.requestHash, r.agentId, r.requestBlock, r.requestTx, nowMs, iso(nowMs), iso(nowMs)).changes === 1;
    },
    async erc8004Cursor(key: string) {
      const row = s.cursor.get(key) as { next_block: number } | undefined;
      return row ? Number(row.next_block) : null;
    },
    async erc8004SetCursor(key: string, nextBlock: number) {
      s.setCursor.run(key, nextBlock);
    },
    async erc8004ReceiptsFor(requestHash: string, limit: number): Promise<ReceiptMatch[]> {
      const rows = s.receipts.all(requestHash, limit) as Array<{ verification_id: string; result: 'pass' | 'fail'; overall_ratio: number; receipt: string }>;
      return rows.map((r) => ({ verificationId: r.verification_id, result: r.result, overallRatio: Number(r.overall_ratio), receipt: r.receipt }));
    },
    async erc8004PendingFor(requestHash: string) {
      if (!/^[0-9a-f]{64}$/.test(requestHash)) return false;
      return s.pending.get(`%${requestHash}%`) !== undefined;
    },
    async erc8004Claim(registry: string, owner: string, nowMs: number, leaseMs: number) {
      const row = claim.immediate(registry, owner, nowMs, leaseMs);
      return row ? rowOf(row) : null;
    },
    async erc8004Update(registry: string, requestHash: string, owner: string, patch: ValidationPatch, nowMs: number) {
      const { sets, values } = patchColumns(patch, nowMs);
      const r = db
        .prepare(`UPDATE erc8004_validations SET ${sets.map((c) => `${c} = ?`).join(', ')} WHERE registry = ? AND request_hash = ? AND lease_owner = ?`)
        .run(...values, registry, requestHash, owner);
      return r.changes === 1;
    },
    async erc8004Release(registry: string, requestHash: string, owner: string) {
      s.release.run(registry, requestHash, owner);
    },
    async erc8004AssignNonce(registry: string, requestHash: string, owner: string, sender: string, chainNonce: number, nowMs: number) {
      return assignNonce.immediate(registry, requestHash, owner, sender, chainNonce, nowMs);
    },
    async erc8004List(filter: { states?: readonly ValidationState[]; limit: number }): Promise<ValidationRow[]> {
      const states = filter.states ?? [];
      const where = states.length > 0 ? `WHERE state IN (${states.map(() => '?').join(', ')})` : '';
      const rows = db.prepare(`SELECT * FROM erc8004_validations ${where} ORDER BY created_at DESC, request_hash LIMIT ?`).all(...states, filter.limit) as ValidationDbRow[];
      return rows.map(rowOf);
    },
    async erc8004Counts() {
      const out: Partial<Record<ValidationState, number>> = {};
      for (const r of s.counts.all() as Array<{ state: ValidationState; n: number }>) out[r.state] = Number(r.n);
      return out;
    },
    async erc8004OfAgent(agentId: string, limit: number) {
      return (s.ofAgent.all(agentId, limit) as ValidationDbRow[]).map(rowOf);
    },
  };
}
