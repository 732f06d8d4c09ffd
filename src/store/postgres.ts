/**
 * @module The scale-out store: PostgreSQL through a connection URL, so any
 * number of stateless instances can share it. Every decision that must be exact
 * across instances is one statement (allowance: INSERT … ON CONFLICT … DO UPDATE
 * … WHERE used < limit; payments: INSERT … ON CONFLICT DO NOTHING), and a
 * receipt's INSERT is committed with synchronous_commit=on before it resolves.
 * Receipts and allowance units are group-committed (postgres-writer.ts): one
 * statement, one round trip and one commit for whatever was asked while the
 * previous flush was on the wire. The allowance counter commits without waiting
 * for the WAL flush (its own small pool, synchronous_commit=off): the decision is
 * just as exact (the row lock), a hot counter row is not held for a disk flush, and
 * a receipt's commit flushes every counter update made before it; a crash of the
 * database server can forget units of calls whose receipts were never acknowledged.
 * A unit taken with its receipt (consumeAllowanceAndSaveReceipt) is the exception:
 * it is decided in the receipts' statement, so its counter row is held until that
 * commit, once per flush, in exchange for one round trip and one commit instead of two.
 */
import { createRequire } from 'node:module';
import {
  allowanceState,
  assertDay,
  assertLimit,
  assertPageLimit,
  assertPaymentKey,
  assertRequestHash,
  assertUnits,
  decodeCursor,
  HISTORY_COLUMNS,
  LOG_NOTE_KEY_COLUMNS,
  logNoteKeyValues,
  PENDING_COLUMNS,
  pendingValues,
  receiptValues,
  reputationPage,
  SIGNING_KEY_COLUMNS,
  signingKeyValues,
  toEvent,
  toPending,
  toReservation,
  toLogNoteKey,
  toSigningKey,
  verificationIdsText,
  type EventRow,
  type HistoryRow,
  type PaymentRow,
  type LogNoteKeyRow,
  type PendingRow,
  type SigningKeyRow,
} from './common.js';
import { storeFaultReason } from './faults.js';
import { createPostgresValidationQueue } from '../erc8004/queue-postgres.js';
import { createPostgresLog } from './log-postgres.js';
import { POSTGRES_MIGRATIONS, type PgMigration } from './migrations/postgres.js';
import { createPostgresAllowanceCounter, createPostgresReceiptWriter } from './postgres-writer.js';
import { signingHere } from './sign-here.js';
import { NO_STORE_METRICS, type AllowanceState, type PaymentEvent, type PaymentKey, type PaymentReservation, type PendingSettlement, type ReceiptRecord, type ReputationPage, type SigningKeyRecord, type LogNoteKeyRecord, type Store } from './store.js';

/** The part of the `pg` API this store uses (the package ships no types). */
interface PgQueryResult<R> {
  rows: R[];
  rowCount: number | null;
}
interface PgQueryable {
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<PgQueryResult<R>>;
  /** A named query is prepared once per connection and then only bound and executed. */
  query<R = Record<string, unknown>>(config: { name?: string; text: string; values?: unknown[] }): Promise<PgQueryResult<R>>;
}
interface PgPoolClient extends PgQueryable {
  release(err?: Error | boolean): void;
  on(event: 'error', listener: (err: Error) => void): void;
  removeListener(event: 'error', listener: (err: Error) => void): void;
}
interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): void;
}
type PgPoolConstructor = new (config: {
  connectionString: string;
  max?: number;
  application_name?: string;
  connectionTimeoutMillis?: number;
  keepAlive?: boolean;
  /** Startup options, e.g. `-c synchronous_commit=on`: session settings at no extra round trip. */
  options?: string;
}) => PgPool;

export interface PostgresStoreOptions {
  /** postgres:// or postgresql:// URL. */
  connectionString: string;
  /** Schema holding the tables (default `public`); created by migrate() when missing. */
  schema?: string;
  /** Connections per instance for queries and receipt writes (default 10). */
  poolSize?: number;
  /** Connections per instance for the allowance counter (default 4); see the module comment. */
  counterPoolSize?: number;
  /** Receipt flushes (multi-row INSERTs) on the wire at once (default 2); see postgres-writer.ts. */
  writerFlushes?: number;
  /** Errors of idle pooled connections (e.g. the server restarted); the next query reconnects. */
  onIdleError?: (err: Error) => void;
  /** How long a query waits for a connection before failing as unavailable (default 5000 ms). */
  connectTimeoutMs?: number;
}

export interface PostgresStore extends Store {
  readonly schema: string;
  /** Drop the whole schema (tests use a throwaway schema per run). Refuses `public`. */
  dropSchema(): Promise<void>;
}

const require = createRequire(import.meta.url);
const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;
/** First key of the two-int advisory lock taken while migrating; the second is hashtext(schema). */
const MIGRATION_LOCK_NAMESPACE = 0x414f56; // "AOV"

export async function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_RE.test(schema)) throw new TypeError(`schema must match ${SCHEMA_RE}, got ${JSON.stringify(schema)}`);
  const q = `"${schema}"`;
  const pg = require('pg') as { Pool: PgPoolConstructor };
  const poolOptions = {
    connectionString: options.connectionString,
    application_name: 'agent-output-verifier',
    // During an outage a request fails (503) after this long instead of queueing forever.
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    keepAlive: true,
  };
  // The server default may have been relaxed: every commit on these connections (receipts, payments,
  // pending settlements, the log) is on disk before it is acknowledged.
  const pool = new pg.Pool({ ...poolOptions, max: options.poolSize ?? 10, options: '-c synchronous_commit=on' });
  // Allowance updates only: see the module comment for why they need not wait for the WAL flush.
  const counterPool = new pg.Pool({ ...poolOptions, max: options.counterPoolSize ?? 4, options: '-c synchronous_commit=off' });
  // Without a listener an idle connection dropped by the server would crash the process.
  pool.on('error', options.onIdleError ?? (() => {}));
  counterPool.on('error', options.onIdleError ?? (() => {}));
  const writer = createPostgresReceiptWriter({ pool, q, maxInFlight: options.writerFlushes });
  const counter = createPostgresAllowanceCounter({ pool: counterPool, q, maxInFlight: options.writerFlushes });
  let closed = false;

  async function migrate(): Promise<void> {
    await withTransaction(pool, async (c) => {
      // Concurrent instances starting together queue here instead of racing on CREATE TABLE.
      await c.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [MIGRATION_LOCK_NAMESPACE, schema]);
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${q}`);
      await c.query(`CREATE TABLE IF NOT EXISTS ${q}.schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
      const applied = new Set((await c.query<{ version: number }>(`SELECT version FROM ${q}.schema_migrations`)).rows.map((r) => r.version));
      for (const m of POSTGRES_MIGRATIONS as readonly PgMigration[]) {
        if (applied.has(m.version)) continue;
        await c.query(m.sql(q));
        await c.query(`INSERT INTO ${q}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
      }
    });
  }

  async function readUsed(clientKey: string, day: string): Promise<number> {
    const r = await pool.query<{ used: number }>(`SELECT used FROM ${q}.allowance WHERE client_key = $1 AND day = $2`, [clientKey, day]);
    return r.rows[0]?.used ?? 0;
  }

  const store: PostgresStore = {
    ...createPostgresLog({ pool, q, transaction: (fn) => withTransaction(pool, fn) }),
    erc8004: createPostgresValidationQueue({ pool, q, transaction: (fn) => withTransaction(pool, fn) }),
    // The WAL syncs, restarts and writer-thread waits are the embedded store's; PostgreSQL has none of them.
    ...NO_STORE_METRICS,
    // Signed on this thread by the receipts code, then stored as saveReceipt stores any receipt.
    ...signingHere(() => store),
    schema,
    migrate,

    async appliedMigrations() {
      return (await pool.query<{ version: number }>(`SELECT version FROM ${q}.schema_migrations ORDER BY version`)).rows.map((r) => r.version);
    },

    async dropSchema() {
      if (schema === 'public') throw new Error('refusing to drop the public schema');
      await pool.query(`DROP SCHEMA IF EXISTS ${q} CASCADE`);
    },

    async consumeAllowance(clientKey: string, day: string, limit: number): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      if (limit === 0) return store.peekAllowance(clientKey, day, limit);
      // Decided with the other calls of its flush, in one statement (see postgres-writer.ts).
      const r = await counter.consume(clientKey, day, limit);
      return allowanceState(r.allowed, limit, r.used);
    },

    async peekAllowance(clientKey: string, day: string, limit: number): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      const used = await readUsed(clientKey, day);
      return allowanceState(used < limit, limit, used);
    },

    async refundAllowance(clientKey: string, day: string): Promise<void> {
      assertDay(day);
      await counterPool.query(`UPDATE ${q}.allowance SET used = used - 1 WHERE client_key = $1 AND day = $2 AND used > 0`, [clientKey, day]);
    },

    async takeAllowance(clientKey: string, day: string, limit: number, units: number): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      assertUnits(units);
      // More units than the limit can never be granted (this also keeps the INSERT branch within the limit).
      if (units > limit) return { ...(await store.peekAllowance(clientKey, day, limit)), allowed: false };
      // One statement, like consumeAllowance: the row is locked and the sum re-checked on its latest version.
      const r = await counterPool.query<{ used: number }>(
        `INSERT INTO ${q}.allowance AS a (client_key, day, used) VALUES ($1, $2, $3)
         ON CONFLICT (client_key, day) DO UPDATE SET used = a.used + EXCLUDED.used WHERE a.used + EXCLUDED.used <= $4
         RETURNING used`,
        [clientKey, day, units, limit],
      );
      if (r.rows.length === 1) return allowanceState(true, limit, r.rows[0].used);
      return allowanceState(false, limit, await readUsed(clientKey, day));
    },

    async refundAllowanceUnits(clientKey: string, day: string, units: number): Promise<void> {
      assertDay(day);
      assertUnits(units);
      await counterPool.query(`UPDATE ${q}.allowance SET used = greatest(used - $3, 0) WHERE client_key = $1 AND day = $2`, [clientKey, day, units]);
    },

    async saveReceipts(records: readonly ReceiptRecord[]): Promise<void> {
      if (records.length === 0) return;
      // One statement (shared with whatever else is queued): every receipt, and by the trigger its log queue entry, or none.
      await writer.save(records.map(receiptValues));
    },

    async pruneAllowance(beforeDay: string): Promise<number> {
      assertDay(beforeDay);
      return (await pool.query(`DELETE FROM ${q}.allowance WHERE day < $1`, [beforeDay])).rowCount ?? 0;
    },

    async consumeAllowanceAndSaveReceipt(clientKey: string, day: string, limit: number, record: ReceiptRecord): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      if (limit === 0) return store.peekAllowance(clientKey, day, limit);
      // The unit is taken in the receipt's own statement and commit (see postgres-writer.ts): one round trip.
      const r = await writer.saveWithUnit(receiptValues(record), { clientKey, day, limit });
      return allowanceState(r.allowed, limit, r.used);
    },

    async saveReceipt(record: ReceiptRecord): Promise<void> {
      // Committed (synchronous_commit=on) with whatever else was queued, before this resolves.
      await writer.save([receiptValues(record)]);
    },

    async getReceipt(verificationId: string): Promise<string | null> {
      const r = await pool.query<{ receipt: string }>(`SELECT receipt FROM ${q}.receipts WHERE verification_id = $1`, [verificationId]);
      return r.rows[0]?.receipt ?? null;
    },

    async reputation(agentId: string, page: { limit: number; cursor?: string | null }): Promise<ReputationPage> {
      assertPageLimit(page.limit);
      const cursor = page.cursor ? decodeCursor(page.cursor) : null;
      // REPEATABLE READ: counts and the page come from one snapshot.
      return withTransaction(
        pool,
        async (c) => {
          const counts = (
            await c.query<{ verifications: string; passes: string }>(
              `SELECT count(*) AS verifications, count(*) FILTER (WHERE result = 'pass') AS passes FROM ${q}.receipts WHERE agent_id = $1`,
              [agentId],
            )
          ).rows[0];
          const verifications = Number(counts.verifications);
          const passes = Number(counts.passes);
          let firstSeen: string | null = null;
          let lastSeen: string | null = null;
          if (verifications > 0) {
            const edges = await c.query<{ first_seen: string; last_seen: string }>(
              `SELECT
                 (SELECT verified_at FROM ${q}.receipts WHERE agent_id = $1 ORDER BY verified_ms ASC, verification_id ASC LIMIT 1) AS first_seen,
                 (SELECT verified_at FROM ${q}.receipts WHERE agent_id = $1 ORDER BY verified_ms DESC, verification_id DESC LIMIT 1) AS last_seen`,
              [agentId],
            );
            firstSeen = edges.rows[0].first_seen;
            lastSeen = edges.rows[0].last_seen;
          }
          const rows = (
            cursor
              ? await c.query<HistoryRow>(
                  `SELECT ${HISTORY_COLUMNS} FROM ${q}.receipts
                   WHERE agent_id = $1 AND (verified_ms, verification_id) < ($2::bigint, $3::text)
                   ORDER BY verified_ms DESC, verification_id DESC LIMIT $4`,
                  [agentId, cursor.ms, cursor.id, page.limit + 1],
                )
              : await c.query<HistoryRow>(
                  `SELECT ${HISTORY_COLUMNS} FROM ${q}.receipts WHERE agent_id = $1
                   ORDER BY verified_ms DESC, verification_id DESC LIMIT $2`,
                  [agentId, page.limit + 1],
                )
          ).rows;
          return reputationPage(agentId, { verifications, passes }, { first: firstSeen, last: lastSeen }, rows, page.limit);
        },
        'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
      );
    },

    async agentResults(agentId: string) {
      const r = await pool.query<{ result: 'pass' | 'fail'; verified_at: string }>(
        `SELECT result, verified_at FROM ${q}.receipts WHERE agent_id = $1 ORDER BY verified_ms ASC, verification_id ASC`,
        [agentId],
      );
      return r.rows.map((row) => ({ result: row.result, verifiedAt: row.verified_at }));
    },

    async reservePayment(key: PaymentKey, requestHash: string): Promise<boolean> {
      assertPaymentKey(key);
      assertRequestHash(requestHash);
      const r = await pool.query(
        `INSERT INTO ${q}.payments (network, payer, nonce, status, request_hash) VALUES ($1, $2, $3, 'reserved', $4) ON CONFLICT (network, payer, nonce) DO NOTHING`,
        [key.network, key.payer, key.nonce, requestHash],
      );
      return r.rowCount === 1;
    },

    async paymentReservation(key: PaymentKey): Promise<PaymentReservation | null> {
      assertPaymentKey(key);
      const r = await pool.query<PaymentRow>(
        `SELECT status, request_hash, verification_ids, transaction_hash, created_at FROM ${q}.payments WHERE network = $1 AND payer = $2 AND nonce = $3`,
        [key.network, key.payer, key.nonce],
      );
      return r.rows[0] ? toReservation(r.rows[0]) : null;
    },

    async releasePayment(key: PaymentKey): Promise<void> {
      assertPaymentKey(key);
      await pool.query(`DELETE FROM ${q}.payments WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'reserved'`, [key.network, key.payer, key.nonce]);
    },

    async settlePayment(key: PaymentKey, bought: { verificationIds: readonly string[]; transaction: string | null }): Promise<void> {
      assertPaymentKey(key);
      await pool.query(
        `UPDATE ${q}.payments SET status = 'settled', updated_at = now(), verification_ids = $4, transaction_hash = coalesce($5, transaction_hash)
         WHERE network = $1 AND payer = $2 AND nonce = $3`,
        [key.network, key.payer, key.nonce, verificationIdsText(bought.verificationIds), bought.transaction],
      );
    },

    async savePendingSettlement(pending: PendingSettlement): Promise<void> {
      const values = pendingValues(pending);
      await withTransaction(pool, async (c) => {
        // Durable before the settlement starts, like a receipt.
        await c.query('SET LOCAL synchronous_commit = on');
        await c.query(
          `INSERT INTO ${q}.pending_settlements (${PENDING_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (network, payer, nonce) DO UPDATE SET state = EXCLUDED.state, route = EXCLUDED.route, verification_id = EXCLUDED.verification_id,
             record = EXCLUDED.record, payment = EXCLUDED.payment, transaction_hash = EXCLUDED.transaction_hash, created_at = EXCLUDED.created_at`,
          values,
        );
      });
    },

    async setPendingTransaction(key: PaymentKey, transaction: string): Promise<void> {
      assertPaymentKey(key);
      await pool.query(`UPDATE ${q}.pending_settlements SET transaction_hash = $1 WHERE network = $2 AND payer = $3 AND nonce = $4`, [
        transaction,
        key.network,
        key.payer,
        key.nonce,
      ]);
    },

    async pendingSettlement(key: PaymentKey): Promise<PendingSettlement | null> {
      assertPaymentKey(key);
      const r = await pool.query<PendingRow>(`SELECT ${PENDING_COLUMNS} FROM ${q}.pending_settlements WHERE network = $1 AND payer = $2 AND nonce = $3`, [
        key.network,
        key.payer,
        key.nonce,
      ]);
      return r.rows[0] ? toPending(r.rows[0]) : null;
    },

    async pendingSettlementFor(verificationId: string): Promise<PendingSettlement | null> {
      const r = await pool.query<PendingRow>(`SELECT ${PENDING_COLUMNS} FROM ${q}.pending_settlements WHERE verification_id = $1`, [verificationId]);
      return r.rows[0] ? toPending(r.rows[0]) : null;
    },

    async pendingSettlements(): Promise<PendingSettlement[]> {
      return (await pool.query<PendingRow>(`SELECT ${PENDING_COLUMNS} FROM ${q}.pending_settlements WHERE state = 'pending' ORDER BY created_at ASC`)).rows.map(toPending);
    },

    async markPendingSettled(key: PaymentKey, transaction: string | null): Promise<void> {
      assertPaymentKey(key);
      await pool.query(
        `UPDATE ${q}.pending_settlements SET state = 'settled', transaction_hash = coalesce($1, transaction_hash) WHERE network = $2 AND payer = $3 AND nonce = $4`,
        [transaction, key.network, key.payer, key.nonce],
      );
    },

    async deletePendingSettlement(key: PaymentKey): Promise<void> {
      assertPaymentKey(key);
      await pool.query(`DELETE FROM ${q}.pending_settlements WHERE network = $1 AND payer = $2 AND nonce = $3`, [key.network, key.payer, key.nonce]);
    },

    async recordPaymentEvent(event: PaymentEvent): Promise<void> {
      assertPaymentKey(event.key);
      await pool.query(
        `INSERT INTO ${q}.payment_events (network, payer, nonce, kind, route, amount, verification_id, at, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [event.key.network, event.key.payer, event.key.nonce, event.kind, event.route, event.amount, event.verificationId, event.at, event.detail],
      );
    },

    async paymentEvents(filter?: { verificationId?: string }): Promise<PaymentEvent[]> {
      const r =
        filter?.verificationId !== undefined
          ? await pool.query<EventRow>(`SELECT * FROM ${q}.payment_events WHERE verification_id = $1 ORDER BY id ASC`, [filter.verificationId])
          : await pool.query<EventRow>(`SELECT * FROM ${q}.payment_events ORDER BY id ASC`);
      return r.rows.map(toEvent);
    },

    async health(): Promise<boolean> {
      if (closed) return false;
      try {
        return (await pool.query<{ ok: number }>('SELECT 1 AS ok')).rows[0]?.ok === 1;
      } catch {
        return false;
      }
    },

    async signingKeys(): Promise<SigningKeyRecord[]> {
      const r = await pool.query<SigningKeyRow>(`SELECT ${SIGNING_KEY_COLUMNS} FROM ${q}.signing_keys ORDER BY created_at ASC, key_version ASC`);
      return r.rows.map(toSigningKey);
    },

    async recordSigningKeys(keys: SigningKeyRecord[]): Promise<void> {
      const rows = keys.map(signingKeyValues);
      if (rows.length === 0) return;
      await withTransaction(pool, async (c) => {
        for (const r of rows) {
          await c.query(
            `INSERT INTO ${q}.signing_keys AS signing_keys (${SIGNING_KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (key_version) DO UPDATE SET
           status = CASE WHEN excluded.status = 'retired' THEN 'retired' ELSE signing_keys.status END,
           not_after = COALESCE(signing_keys.not_after, excluded.not_after)`,
            r,
          );
        }
      });
    },

    async addSigningKey(key: SigningKeyRecord, opts?: { onlyIfEmpty?: boolean }): Promise<boolean> {
      const row = signingKeyValues(key);
      return withTransaction(pool, async (c) => {
        // One rotation at a time, across instances and the CLI.
        await c.query(`LOCK TABLE ${q}.signing_keys IN EXCLUSIVE MODE`);
        if (opts?.onlyIfEmpty && (await c.query(`SELECT 1 FROM ${q}.signing_keys LIMIT 1`)).rows.length > 0) return false;
        await c.query(`UPDATE ${q}.signing_keys SET status = 'retired', not_after = $1 WHERE status = 'active'`, [key.notBefore]);
        await c.query(`INSERT INTO ${q}.signing_keys (${SIGNING_KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, row);
        return true;
      });
    },

    async logNoteKey(name: string): Promise<LogNoteKeyRecord | null> {
      const r = await pool.query<LogNoteKeyRow>(`SELECT ${LOG_NOTE_KEY_COLUMNS} FROM ${q}.log_note_keys WHERE name = $1`, [name]);
      return r.rows[0] ? toLogNoteKey(r.rows[0]) : null;
    },

    async addLogNoteKey(key: LogNoteKeyRecord): Promise<LogNoteKeyRecord> {
      const row = logNoteKeyValues(key);
      // The primary key decides between instances inserting at once; the loser's insert does nothing and it reads the winner.
      await pool.query(`INSERT INTO ${q}.log_note_keys (${LOG_NOTE_KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING`, row);
      const r = await pool.query<LogNoteKeyRow>(`SELECT ${LOG_NOTE_KEY_COLUMNS} FROM ${q}.log_note_keys WHERE name = $1`, [key.name]);
      if (!r.rows[0]) throw new Error(`the log note key of ${key.name} is missing right after its insert`);
      return toLogNoteKey(r.rows[0]);
    },

    async sealLogNoteKey(name: string, publicKey: string, privateKey: string): Promise<boolean> {
      const r = await pool.query(`UPDATE ${q}.log_note_keys SET private_key = $1 WHERE name = $2 AND public_key = $3 AND private_key IS NULL`, [privateKey, name, publicKey]);
      return r.rowCount === 1;
    },

    async check(): Promise<string | null> {
      if (closed) return 'store closed';
      try {
        // A real commit, synchronously flushed: proves the server can write, not only answer.
        await withTransaction(pool, async (c) => {
          await c.query('SET LOCAL synchronous_commit = on');
          await c.query(`UPDATE ${q}.schema_migrations SET name = name WHERE version = (SELECT min(version) FROM ${q}.schema_migrations)`);
        });
        return null;
      } catch (err) {
        return storeFaultReason(err) ?? 'database cannot commit';
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      // Saves already queued are committed (or fail) before the connections go.
      await Promise.all([writer.close(), counter.close()]);
      await Promise.all([pool.end(), counterPool.end()]);
    },
  };

  try {
    await migrate();
  } catch (err) {
    // Do not leave a pool behind when the database cannot be reached or migrated.
    closed = true;
    await Promise.all([pool.end().catch(() => {}), counterPool.end().catch(() => {})]);
    throw err;
  }
  return store;
}

async function withTransaction<T>(pool: PgPool, fn: (c: PgPoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
  const c = await pool.connect();
  // A checked-out client has no pool listener: without this one, a connection cut between two
  // statements is an unhandled 'error' event and the process exits. The statement in progress
  // (or the next one) fails instead, and the broken connection is destroyed below.
  let broken: Error | null = null;
  const onError = (err: Error) => {
    broken = err;
  };
  c.on('error', onError);
  const release = (destroy: boolean) => {
    c.removeListener('error', onError);
    c.release(destroy || broken !== null);
  };
  try {
    await c.query(begin);
    const out = await fn(c);
    await c.query('COMMIT');
    release(false);
    return out;
  } catch (err) {
    // A failed ROLLBACK means the connection is unusable: destroy it rather than return it to the pool.
    try {
      if (broken) throw broken;
      await c.query('ROLLBACK');
      release(false);
    } catch {
      release(true);
    }
    throw err;
  }
}
