/**
 * @module The embedded store: one SQLite file in WAL mode. Several processes may
 * share the file; SQLite serializes writers, and each allowance decision is a
 * single statement, so the count stays exact across processes. `synchronous=FULL`
 * by default because a receipt that reached a client must survive a crash or a
 * power cut. Measured on a virtio ext4 disk with ~2 KB receipts: FULL ≈ 0.21–0.28 ms
 * per committed insert (≈ 3.6–4.8k/s from one writer) against 0.05–0.08 ms with
 * NORMAL — about 4× slower, still small next to the rest of a verification.
 */
import { mkdirSync, statfsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
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
import { createSqliteLog } from './log-sqlite.js';
import { createSqliteValidationQueue } from '../erc8004/queue-sqlite.js';
import { SQLITE_WRITE_SQL } from './sqlite-sql.js';
import { SQLITE_MIGRATIONS, type Migration } from './migrations/sqlite.js';
import { StoreFaultError } from './faults.js';
import { signingHere } from './sign-here.js';
import { NO_STORE_METRICS, type AllowanceState, type PaymentEvent, type PaymentKey, type PaymentReservation, type PendingSettlement, type ReceiptRecord, type ReputationPage, type SigningKeyRecord, type LogNoteKeyRecord, type Store } from './store.js';

/** The part of the better-sqlite3 API this store uses (the package ships no types). */
interface SqliteStatement {
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface SqliteDatabase {
  readonly open: boolean;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) & { immediate(...args: A): R };
  close(): void;
}
type SqliteConstructor = new (file: string, options?: { timeout?: number }) => SqliteDatabase;

export interface SqliteStoreOptions {
  /** Path of the database file; its directory is created when missing. */
  file: string;
  /**
   * FULL (default) syncs the WAL on every commit, so a committed receipt survives
   * power loss. NORMAL only survives a process crash; use it for throwaway data.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a writer waits for another process's lock before failing (ms). */
  busyTimeoutMs?: number;
  /**
   * Group commit: allowance and receipt writes issued in the same event-loop turn
   * are committed together in one transaction (one WAL sync for the batch instead
   * of one per write). Each call still resolves only after its batch is committed,
   * so durability is unchanged; under concurrent load it removes most syncs.
   */
  groupCommit?: boolean;
}

export interface SqliteStore extends Store {
  /**
   * Throws a StoreFaultError when the database file is no longer the one this
   * store opened (removed or replaced): SQLite would keep writing into the
   * unlinked file and every commit would be lost at the next start.
   */
  assertFile(): void;
  /** Inode and device of the database file as opened (decimal strings), or null in memory. */
  fileIdentity(): { ino: string; dev: string } | null;
}

/** Below this much free space in the database's file system, readiness reports `disk full`. */
const SQLITE_MIN_FREE_BYTES = 1024 * 1024;

const require = createRequire(import.meta.url);

/**
 * Switches the file to WAL. On a file that other processes are creating at the same instant, SQLite can
 * answer SQLITE_BUSY at once instead of calling the busy handler (it does not wait for a lock that could
 * deadlock), so a service whose processes start together on a fresh data directory would crash at start;
 * the switch is retried here, with short sleeps, until the busy timeout.
 */
function enableWal(db: { pragma(sql: string): unknown }, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw e;
      // Once, at open: a synchronous pause is acceptable here (nothing is being served yet).
      Atomics.wait(nap, 0, 0, 5 + Math.floor(Math.random() * 10));
    }
  }
}

export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const Database = require('better-sqlite3') as SqliteConstructor;
  if (options.file !== ':memory:') mkdirSync(dirname(options.file), { recursive: true });
  const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
  const db = new Database(options.file, { timeout: busyTimeoutMs });
  // busy_timeout first: switching to WAL takes a lock another process may hold.
  db.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  enableWal(db, busyTimeoutMs);
  db.pragma(`synchronous = ${options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL'}`);
  db.pragma('foreign_keys = ON');

  runMigrations(db, SQLITE_MIGRATIONS);
  const s = prepareStatements(db);
  const log = createSqliteLog(db, { file: options.file, busyTimeoutMs });
  let closed = false;

  const identity = options.file === ':memory:' ? null : statSync(options.file, { bigint: true });
  function assertFile(): void {
    if (!identity) return;
    const now = statSync(options.file, { throwIfNoEntry: false, bigint: true });
    if (!now) throw new StoreFaultError('database file removed');
    if (now.ino !== identity.ino || now.dev !== identity.dev) throw new StoreFaultError('database file replaced');
  }

  const nowIso = () => new Date().toISOString();

  // Group commit (opt-in): queue writes, flush them in one IMMEDIATE transaction on the next turn.
  type Op = { run: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void };
  let pending: Op[] = [];
  let flushScheduled = false;
  const flush = () => {
    flushScheduled = false;
    const ops = pending;
    pending = [];
    if (closed) {
      for (const op of ops) op.reject(new Error('the store is closed'));
      return;
    }
    const outcomes: Array<{ ok: boolean; value: unknown }> = [];
    try {
      db.transaction(() => {
        for (const op of ops) {
          try {
            outcomes.push({ ok: true, value: op.run() });
          } catch (e) {
            // A failed statement is rolled back on its own; the rest of the batch commits.
            outcomes.push({ ok: false, value: e });
          }
        }
      }).immediate();
    } catch (e) {
      for (const op of ops) op.reject(e);
      return;
    }
    ops.forEach((op, i) => (outcomes[i]!.ok ? op.resolve(outcomes[i]!.value) : op.reject(outcomes[i]!.value)));
  };
  const write = <T>(run: () => T): Promise<T> => {
    if (!options.groupCommit) {
      try {
        return Promise.resolve(run());
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return new Promise<T>((resolve, reject) => {
      pending.push({ run, resolve: resolve as (v: unknown) => void, reject });
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
    });
  };

  const store: SqliteStore = {
    ...log,
    erc8004: createSqliteValidationQueue(db),
    // On this thread there is no writer thread to measure (createSqliteOffloadStore has one).
    ...NO_STORE_METRICS,
    // No writer thread to sign on: signed on this thread by the receipts code, then stored.
    ...signingHere(() => store),

    async migrate() {
      runMigrations(db, SQLITE_MIGRATIONS);
    },

    async appliedMigrations() {
      return (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as Array<{ version: number }>).map((r) => r.version);
    },

    async consumeAllowance(clientKey: string, day: string, limit: number): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      if (limit === 0) return store.peekAllowance(clientKey, day, limit);
      // One statement: the increment and the limit test happen under the same write lock.
      return write(() => {
        const row = s.consume.get(clientKey, day, limit) as { used: number } | undefined;
        if (row) return allowanceState(true, limit, row.used);
        return allowanceState(false, limit, readUsed(clientKey, day));
      });
    },

    async peekAllowance(clientKey: string, day: string, limit: number): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      const used = readUsed(clientKey, day);
      return allowanceState(used < limit, limit, used);
    },

    async refundAllowance(clientKey: string, day: string): Promise<void> {
      assertDay(day);
      await write(() => s.refund.run(clientKey, day));
    },

    async takeAllowance(clientKey: string, day: string, limit: number, units: number): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      assertUnits(units);
      // More units than the limit can never be granted (this also keeps the INSERT branch within the limit).
      if (units > limit) return store.peekAllowance(clientKey, day, limit).then((st) => ({ ...st, allowed: false }));
      // One statement, like consumeAllowance: all units or none, under the same write lock.
      return write(() => {
        const row = s.take.get(clientKey, day, units, limit) as { used: number } | undefined;
        if (row) return allowanceState(true, limit, row.used);
        return allowanceState(false, limit, readUsed(clientKey, day));
      });
    },

    async refundAllowanceUnits(clientKey: string, day: string, units: number): Promise<void> {
      assertDay(day);
      assertUnits(units);
      await write(() => s.refundUnits.run(units, clientKey, day));
    },

    async pruneAllowance(beforeDay: string): Promise<number> {
      assertDay(beforeDay);
      return s.pruneAllowance.run(beforeDay).changes;
    },

    async saveReceipt(record: ReceiptRecord): Promise<void> {
      const values = receiptValues(record);
      assertFile();
      // Autocommit (or the group's commit): resolves after the commit (and, with FULL, the fsync).
      await write(() => s.insertReceipt.run(...values));
      // Committed into a file that is still the database: otherwise the receipt is not acknowledged.
      assertFile();
    },

    async consumeAllowanceAndSaveReceipt(clientKey: string, day: string, limit: number, record: ReceiptRecord): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      const values = receiptValues(record);
      assertFile();
      // A savepoint inside a group commit: the unit and the receipt are committed together or not at all.
      const state = await write(() => consumeAndSave(clientKey, day, limit, values));
      assertFile();
      return state;
    },

    async saveReceipts(records: readonly ReceiptRecord[]): Promise<void> {
      if (records.length === 0) return;
      const rows = records.map(receiptValues);
      assertFile();
      // One transaction (a savepoint inside a group commit): every receipt is committed, or none.
      await write(() => saveMany(rows));
      assertFile();
    },

    async getReceipt(verificationId: string): Promise<string | null> {
      const row = s.getReceipt.get(verificationId) as { receipt: string } | undefined;
      return row ? row.receipt : null;
    },

    async reputation(agentId: string, page: { limit: number; cursor?: string | null }): Promise<ReputationPage> {
      assertPageLimit(page.limit);
      const cursor = page.cursor ? decodeCursor(page.cursor) : null;
      // One read transaction, so counts and the page come from the same snapshot.
      return readSnapshot(() => {
        const c = s.counts.get(agentId) as { verifications: number; passes: number | null };
        const rows = (cursor ? s.historyAfter.all(agentId, cursor.ms, cursor.ms, cursor.id, page.limit + 1) : s.historyFirst.all(agentId, page.limit + 1)) as HistoryRow[];
        const verifications = c.verifications;
        const seen =
          verifications > 0
            ? { first: (s.firstSeen.get(agentId) as { verified_at: string }).verified_at, last: (s.lastSeen.get(agentId) as { verified_at: string }).verified_at }
            : { first: null, last: null };
        return reputationPage(agentId, { verifications, passes: c.passes ?? 0 }, seen, rows, page.limit);
      });
    },

    async agentResults(agentId: string) {
      return (s.agentResults.all(agentId) as Array<{ result: 'pass' | 'fail'; verified_at: string }>).map((r) => ({ result: r.result, verifiedAt: r.verified_at }));
    },

    async reservePayment(key: PaymentKey, requestHash: string): Promise<boolean> {
      assertPaymentKey(key);
      assertRequestHash(requestHash);
      const now = nowIso();
      return s.reserve.run(key.network, key.payer, key.nonce, now, now, requestHash).changes === 1;
    },

    async paymentReservation(key: PaymentKey): Promise<PaymentReservation | null> {
      assertPaymentKey(key);
      const row = s.getPayment.get(key.network, key.payer, key.nonce) as PaymentRow | undefined;
      return row ? toReservation(row) : null;
    },

    async releasePayment(key: PaymentKey): Promise<void> {
      assertPaymentKey(key);
      s.release.run(key.network, key.payer, key.nonce);
    },

    async settlePayment(key: PaymentKey, bought: { verificationIds: readonly string[]; transaction: string | null }): Promise<void> {
      assertPaymentKey(key);
      s.settle.run(nowIso(), verificationIdsText(bought.verificationIds), bought.transaction, key.network, key.payer, key.nonce);
    },

    async savePendingSettlement(pending: PendingSettlement): Promise<void> {
      // On the main connection with synchronous=FULL: committed and synced before the settlement starts.
      s.savePending.run(...pendingValues(pending));
    },

    async setPendingTransaction(key: PaymentKey, transaction: string): Promise<void> {
      assertPaymentKey(key);
      s.setPendingTx.run(transaction, key.network, key.payer, key.nonce);
    },

    async pendingSettlement(key: PaymentKey): Promise<PendingSettlement | null> {
      assertPaymentKey(key);
      const row = s.getPending.get(key.network, key.payer, key.nonce) as PendingRow | undefined;
      return row ? toPending(row) : null;
    },

    async pendingSettlementFor(verificationId: string): Promise<PendingSettlement | null> {
      const row = s.getPendingById.get(verificationId) as PendingRow | undefined;
      return row ? toPending(row) : null;
    },

    async pendingSettlements(): Promise<PendingSettlement[]> {
      return (s.allPending.all() as PendingRow[]).map(toPending);
    },

    async markPendingSettled(key: PaymentKey, transaction: string | null): Promise<void> {
      assertPaymentKey(key);
      s.markPendingSettled.run(transaction, key.network, key.payer, key.nonce);
    },

    async deletePendingSettlement(key: PaymentKey): Promise<void> {
      assertPaymentKey(key);
      s.deletePending.run(key.network, key.payer, key.nonce);
    },

    async recordPaymentEvent(event: PaymentEvent): Promise<void> {
      assertPaymentKey(event.key);
      s.insertEvent.run(event.key.network, event.key.payer, event.key.nonce, event.kind, event.route, event.amount, event.verificationId, event.at, event.detail);
    },

    async paymentEvents(filter?: { verificationId?: string }): Promise<PaymentEvent[]> {
      const rows = (filter?.verificationId !== undefined ? s.eventsFor.all(filter.verificationId) : s.events.all()) as EventRow[];
      return rows.map(toEvent);
    },

    async signingKeys(): Promise<SigningKeyRecord[]> {
      return (s.signingKeys.all() as SigningKeyRow[]).map(toSigningKey);
    },

    async recordSigningKeys(keys: SigningKeyRecord[]): Promise<void> {
      const rows = keys.map(signingKeyValues);
      db.transaction(() => {
        for (const r of rows) s.recordSigningKey.run(...r);
      }).immediate();
    },

    async addSigningKey(key: SigningKeyRecord, opts?: { onlyIfEmpty?: boolean }): Promise<boolean> {
      const row = signingKeyValues(key);
      return db.transaction(() => {
        if (opts?.onlyIfEmpty && s.anySigningKey.get()) return false;
        s.retireSigningKeys.run(key.notBefore);
        s.insertSigningKey.run(...row);
        return true;
      }).immediate();
    },

    async logNoteKey(name: string): Promise<LogNoteKeyRecord | null> {
      const row = s.logNoteKey.get(name) as LogNoteKeyRow | undefined;
      return row ? toLogNoteKey(row) : null;
    },

    async addLogNoteKey(key: LogNoteKeyRecord): Promise<LogNoteKeyRecord> {
      const row = logNoteKeyValues(key);
      // Insert-if-absent and read back in one write transaction: every process on the file gets the first key.
      return db.transaction(() => {
        s.insertLogNoteKey.run(...row);
        return toLogNoteKey(s.logNoteKey.get(key.name) as LogNoteKeyRow);
      }).immediate();
    },

    async sealLogNoteKey(name: string, publicKey: string, privateKey: string): Promise<boolean> {
      return s.sealLogNoteKey.run(privateKey, name, publicKey).changes === 1;
    },

    async health(): Promise<boolean> {
      if (closed) return false;
      try {
        assertFile();
        return (s.ping.get() as { ok: number }).ok === 1;
      } catch {
        return false;
      }
    },

    async check(): Promise<string | null> {
      if (closed) return 'store closed';
      try {
        assertFile();
        if (identity) {
          // A commit can still succeed on a full disk (SQLite reuses WAL space), so look at the space itself.
          const fs = statfsSync(options.file);
          if (fs.bavail * fs.bsize < SQLITE_MIN_FREE_BYTES) return 'disk full';
        }
        // A real commit: rewrites one row with its own value.
        s.probe.run();
        return null;
      } catch (err) {
        if (err instanceof StoreFaultError) return err.reason;
        const code = (err as { code?: unknown }).code;
        return typeof code === 'string' && code.startsWith('SQLITE_FULL') ? 'disk full' : `cannot commit (${typeof code === 'string' ? code : 'error'})`;
      }
    },

    assertFile,
    fileIdentity: () => (identity ? { ino: String(identity.ino), dev: String(identity.dev) } : null),

    async close(): Promise<void> {
      if (closed) return;
      // Queued writes were promised a commit: make it before closing.
      if (pending.length > 0) flush();
      closed = true;
      await log.close();
      db.close();
    },
  };

  const consumeAndSave = db.transaction((clientKey: string, day: string, limit: number, values: unknown[]): AllowanceState => {
    const row = (limit > 0 ? s.consume.get(clientKey, day, limit) : undefined) as { used: number } | undefined;
    if (!row) return allowanceState(false, limit, readUsed(clientKey, day));
    s.insertReceipt.run(...values);
    return allowanceState(true, limit, row.used);
  });
  const saveMany = db.transaction((rows: unknown[][]) => {
    for (const r of rows) s.insertReceipt.run(...r);
  });

  function readUsed(clientKey: string, day: string): number {
    const row = s.peek.get(clientKey, day) as { used: number } | undefined;
    return row ? row.used : 0;
  }

  function readSnapshot<T>(fn: () => T): T {
    return db.transaction(fn)();
  }

  return store;
}

function prepareStatements(db: SqliteDatabase) {
  return {
    consume: db.prepare(SQLITE_WRITE_SQL.consume),
    peek: db.prepare(SQLITE_WRITE_SQL.peek),
    refund: db.prepare(SQLITE_WRITE_SQL.refund),
    insertReceipt: db.prepare(SQLITE_WRITE_SQL.insertReceipt),
    take: db.prepare(SQLITE_WRITE_SQL.take),
    refundUnits: db.prepare(SQLITE_WRITE_SQL.refundUnits),
    getReceipt: db.prepare('SELECT receipt FROM receipts WHERE verification_id = ?'),
    counts: db.prepare(`SELECT count(*) AS verifications, sum(result = 'pass') AS passes FROM receipts WHERE agent_id = ?`),
    firstSeen: db.prepare('SELECT verified_at FROM receipts WHERE agent_id = ? ORDER BY verified_ms ASC, verification_id ASC LIMIT 1'),
    lastSeen: db.prepare('SELECT verified_at FROM receipts WHERE agent_id = ? ORDER BY verified_ms DESC, verification_id DESC LIMIT 1'),
    historyFirst: db.prepare(`SELECT ${HISTORY_COLUMNS} FROM receipts WHERE agent_id = ? ORDER BY verified_ms DESC, verification_id DESC LIMIT ?`),
    historyAfter: db.prepare(
      `SELECT ${HISTORY_COLUMNS} FROM receipts
       WHERE agent_id = ? AND (verified_ms < ? OR (verified_ms = ? AND verification_id < ?))
       ORDER BY verified_ms DESC, verification_id DESC LIMIT ?`,
    ),
    agentResults: db.prepare('SELECT result, verified_at FROM receipts WHERE agent_id = ? ORDER BY verified_ms ASC, verification_id ASC'),
    reserve: db.prepare(
      `INSERT INTO payments (network, payer, nonce, status, created_at, updated_at, request_hash) VALUES (?, ?, ?, 'reserved', ?, ?, ?)
       ON CONFLICT (network, payer, nonce) DO NOTHING`,
    ),
    getPayment: db.prepare('SELECT status, request_hash, verification_ids, transaction_hash, created_at FROM payments WHERE network = ? AND payer = ? AND nonce = ?'),
    release: db.prepare(`DELETE FROM payments WHERE network = ? AND payer = ? AND nonce = ? AND status = 'reserved'`),
    settle: db.prepare(
      `UPDATE payments SET status = 'settled', updated_at = ?, verification_ids = ?, transaction_hash = coalesce(?, transaction_hash) WHERE network = ? AND payer = ? AND nonce = ?`,
    ),
    insertEvent: db.prepare(
      `INSERT INTO payment_events (network, payer, nonce, kind, route, amount, verification_id, at, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    events: db.prepare('SELECT * FROM payment_events ORDER BY id ASC'),
    eventsFor: db.prepare('SELECT * FROM payment_events WHERE verification_id = ? ORDER BY id ASC'),
    savePending: db.prepare(`INSERT OR REPLACE INTO pending_settlements (${PENDING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    setPendingTx: db.prepare('UPDATE pending_settlements SET transaction_hash = ? WHERE network = ? AND payer = ? AND nonce = ?'),
    getPending: db.prepare(`SELECT ${PENDING_COLUMNS} FROM pending_settlements WHERE network = ? AND payer = ? AND nonce = ?`),
    getPendingById: db.prepare(`SELECT ${PENDING_COLUMNS} FROM pending_settlements WHERE verification_id = ?`),
    allPending: db.prepare(`SELECT ${PENDING_COLUMNS} FROM pending_settlements WHERE state = 'pending' ORDER BY created_at ASC`),
    markPendingSettled: db.prepare(`UPDATE pending_settlements SET state = 'settled', transaction_hash = coalesce(?, transaction_hash) WHERE network = ? AND payer = ? AND nonce = ?`),
    deletePending: db.prepare('DELETE FROM pending_settlements WHERE network = ? AND payer = ? AND nonce = ?'),
    ping: db.prepare('SELECT 1 AS ok'),
    pruneAllowance: db.prepare('DELETE FROM allowance WHERE day < ?'),
    logNoteKey: db.prepare(`SELECT ${LOG_NOTE_KEY_COLUMNS} FROM log_note_keys WHERE name = ?`),
    insertLogNoteKey: db.prepare(`INSERT INTO log_note_keys (${LOG_NOTE_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`),
    sealLogNoteKey: db.prepare('UPDATE log_note_keys SET private_key = ? WHERE name = ? AND public_key = ? AND private_key IS NULL'),
    signingKeys: db.prepare(`SELECT ${SIGNING_KEY_COLUMNS} FROM signing_keys ORDER BY created_at ASC, key_version ASC`),
    anySigningKey: db.prepare('SELECT 1 AS one FROM signing_keys LIMIT 1'),
    retireSigningKeys: db.prepare("UPDATE signing_keys SET status = 'retired', not_after = ? WHERE status = 'active'"),
    insertSigningKey: db.prepare(`INSERT INTO signing_keys (${SIGNING_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
    recordSigningKey: db.prepare(`INSERT INTO signing_keys (${SIGNING_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (key_version) DO UPDATE SET
           status = CASE WHEN excluded.status = 'retired' THEN 'retired' ELSE signing_keys.status END,
           not_after = COALESCE(signing_keys.not_after, excluded.not_after)`),
    probe: db.prepare('UPDATE schema_migrations SET name = name WHERE version = (SELECT min(version) FROM schema_migrations)'),
  };
}

/**
 * Applies pending migrations inside BEGIN IMMEDIATE: the write lock is taken
 * before reading which versions exist, so two processes opening a fresh file
 * at once cannot both apply version 1.
 */
function runMigrations(db: SqliteDatabase, migrations: readonly Migration[]): void {
  const apply = db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version));
    const insert = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      db.exec(m.sql);
      insert.run(m.version, m.name, new Date().toISOString());
    }
  });
  apply.immediate();
}
