/**
 * @module The ERC-8004 validation queue in the PostgreSQL store, shared by every
 * instance: a request is queued once (primary key on registry and request hash),
 * a row is claimed with FOR UPDATE SKIP LOCKED and a lease (an instance that
 * stalls past it loses the row, and its later writes are refused), and a nonce is
 * taken under the lock of its sender's counter row, in the transaction that gives
 * it to the row, so no two rows ever share one.
 */
import type { ReceiptMatch, SeenRequest, ValidationPatch, ValidationQueueStore, ValidationRow, ValidationState } from './queue-store.js';
import { patchColumns, rowOf, WORK_STATES, type ValidationDbRow } from './queue-rows.js';
import type { PostgresTableDeps } from '../store/log-postgres.js';


/** Advisory lock namespace while the request-hash index is built ("8004"). */
const INDEX_LOCK = 0x38303034;

export function createPostgresValidationQueue({ pool, q, transaction }: PostgresTableDeps): ValidationQueueStore {
  const iso = (ms: number) => new Date(ms).toISOString();
  const t = `${q}.erc8004_validations`;
  return {
    async erc8004Prepare() {
      await transaction(async (c) => {
        await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [INDEX_LOCK, q]);
        await c.query(
          `CREATE INDEX IF NOT EXISTS receipts_request_hash ON ${q}.receipts (((receipt::jsonb) ->> 'request_hash'))
           WHERE ((receipt::jsonb) ->> 'request_hash') IS NOT NULL`,
        );
      });
    },
    async erc8004Enqueue(r: SeenRequest, nowMs: number) {
      const res = await pool.query(
        `INSERT INTO ${t} (registry, request_hash, agent_id, request_block, request_tx, state, next_attempt_ms, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'new', $6, $7, $7) ON CONFLICT DO NOTHING`,
        [r.registry, r.requestHash, r.agentId, r.requestBlock, r.requestTx, nowMs, iso(nowMs)],
      );
      return res.rowCount === 1;
    },
    async erc8004Cursor(key: string) {
      const r = await pool.query<{ next_block: string }>(`SELECT next_block FROM ${q}.erc8004_cursors WHERE key = $1`, [key]);
      return r.rows[0] ? Number(r.rows[0].next_block) : null;
    },
    async erc8004SetCursor(key: string, nextBlock: number) {
      await pool.query(
        `INSERT INTO ${q}.erc8004_cursors AS c (key, next_block) VALUES ($1, $2)
         ON CONFLICT (key) DO UPDATE SET next_block = greatest(c.next_block, excluded.next_block)`,
        [key, nextBlock],
      );
    },
    async erc8004ReceiptsFor(requestHash: string, limit: number): Promise<ReceiptMatch[]> {
      const r = await pool.query<{ verification_id: string; result: 'pass' | 'fail'; overall_ratio: number; receipt: string }>(
        `SELECT verification_id, result, overall_ratio, receipt FROM ${q}.receipts
         WHERE ((receipt::jsonb) ->> 'request_hash') = $1 ORDER BY verified_ms, verification_id LIMIT $2`,
        [requestHash, limit],
      );
      return r.rows.map((x) => ({ verificationId: x.verification_id, result: x.result, overallRatio: Number(x.overall_ratio), receipt: x.receipt }));
    },
    async erc8004PendingFor(requestHash: string) {
      if (!/^[0-9a-f]{64}$/.test(requestHash)) return false;
      const r = await pool.query(`SELECT 1 FROM ${q}.pending_settlements WHERE state = 'pending' AND strpos(record, $1) > 0 LIMIT 1`, [requestHash]);
      return r.rows.length > 0;
    },
    async erc8004Claim(registry: string, owner: string, nowMs: number, leaseMs: number) {
      const r = await pool.query<ValidationDbRow>(
        `UPDATE ${t} v SET lease_owner = $1, lease_until_ms = $3
         WHERE (v.registry, v.request_hash) = (
           SELECT registry, request_hash FROM ${t}
           WHERE registry = $5 AND state = ANY($4::text[]) AND next_attempt_ms <= $2 AND (lease_owner IS NULL OR lease_owner = $1 OR lease_until_ms < $2)
           ORDER BY nonce IS NULL, nonce, next_attempt_ms LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING v.*`,
        [owner, nowMs, nowMs + leaseMs, WORK_STATES, registry],
      );
      return r.rows[0] ? rowOf(r.rows[0]) : null;
    },
    async erc8004Update(registry: string, requestHash: string, owner: string, patch: ValidationPatch, nowMs: number) {
      const { sets, values } = patchColumns(patch, nowMs);
      const n = values.length;
      const r = await pool.query(
        `UPDATE ${t} SET ${sets.map((c, i) => `${c} = $${i + 1}`).join(', ')} WHERE registry = $${n + 1} AND request_hash = $${n + 2} AND lease_owner = $${n + 3}`,
        [...values, registry, requestHash, owner],
      );
      return r.rowCount === 1;
    },
    async erc8004Release(registry: string, requestHash: string, owner: string) {
      await pool.query(`UPDATE ${t} SET lease_until_ms = 0 WHERE registry = $1 AND request_hash = $2 AND lease_owner = $3`, [registry, requestHash, owner]);
    },
    async erc8004AssignNonce(registry: string, requestHash: string, owner: string, sender: string, chainNonce: number, nowMs: number) {
      return transaction(async (c) => {
        const own = await c.query(`SELECT 1 FROM ${t} WHERE registry = $1 AND request_hash = $2 AND lease_owner = $3 AND state = 'queued' FOR UPDATE`, [
          registry,
          requestHash,
          owner,
        ]);
        if (own.rows.length === 0) return null;
        const r = await c.query<{ nonce: string }>(
          `INSERT INTO ${q}.erc8004_senders AS s (address, next_nonce) VALUES ($1, $2::bigint + 1)
           ON CONFLICT (address) DO UPDATE SET next_nonce = greatest(s.next_nonce, $2::bigint) + 1 RETURNING s.next_nonce - 1 AS nonce`,
          [sender, chainNonce],
        );
        const nonce = Number(r.rows[0]!.nonce);
        await c.query(`UPDATE ${t} SET state = 'nonced', sender = $1, nonce = $2, updated_at = $3 WHERE registry = $4 AND request_hash = $5`, [
          sender,
          nonce,
          iso(nowMs),
          registry,
          requestHash,
        ]);
        return nonce;
      });
    },
    async erc8004List(filter: { states?: readonly ValidationState[]; limit: number }): Promise<ValidationRow[]> {
      const states = filter.states ?? [];
      const r =
        states.length > 0
          ? await pool.query<ValidationDbRow>(`SELECT * FROM ${t} WHERE state = ANY($1::text[]) ORDER BY created_at DESC, request_hash LIMIT $2`, [states, filter.limit])
          : await pool.query<ValidationDbRow>(`SELECT * FROM ${t} ORDER BY created_at DESC, request_hash LIMIT $1`, [filter.limit]);
      return r.rows.map(rowOf);
    },
    async erc8004Counts() {
      const r = await pool.query<{ state: ValidationState; n: string }>(`SELECT state, count(*) AS n FROM ${t} GROUP BY state`);
      const out: Partial<Record<ValidationState, number>> = {};
      for (const x of r.rows) out[x.state] = Number(x.n);
      return out;
    },
    async erc8004OfAgent(agentId: string, limit: number) {
      const r = await pool.query<ValidationDbRow>(
        `SELECT v.* FROM ${t} v JOIN ${q}.receipts r ON r.verification_id = v.verification_id
         WHERE r.agent_id = $1 AND v.state = 'confirmed' ORDER BY v.answer_block DESC, v.request_hash LIMIT $2`,
        [agentId, limit],
      );
      return r.rows.map(rowOf);
    },
  };
}
