/**
 * @module The embedded SQLite store with its hot writes (allowance counter,
 * receipts) moved to a worker thread. better-sqlite3 is synchronous: on the main
 * thread every commit's WAL sync (and every checkpoint) stops the event loop, so
 * one slow disk sync delays every request in flight. Here the worker owns a
 * second connection, commits whatever arrived since its last commit as one
 * transaction (group commit), and answers; the main thread keeps serving while
 * the disk syncs. Each call still resolves only after its write is committed,
 * so durability and the exact counter are unchanged. Reads and the rarer writes
 * (payments) stay on the main connection; WAL lets both see each other's commits.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { allowanceState, assertDay, assertLimit, RECEIPT_COLUMNS, receiptValues } from './common.js';
import { createSqliteStore } from './sqlite.js';
import type { SqliteStore, SqliteStoreOptions } from './sqlite.js';
import type { AllowanceState, ReceiptRecord } from './store.js';

export type SqliteOffloadStoreOptions = Omit<SqliteStoreOptions, 'groupCommit'>;

// Plain CommonJS evaluated in the worker: no loader or build step involved, works from src/ and dist/ alike.
// The statements mirror src/store/sqlite.ts (same tables, same single-statement allowance decision).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs });
db.pragma('busy_timeout = ' + Math.trunc(workerData.busyTimeoutMs));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = ' + workerData.synchronous);
const consume = db.prepare(\`INSERT INTO allowance (client_key, day, used) VALUES (?, ?, 1)
  ON CONFLICT (client_key, day) DO UPDATE SET used = used + 1 WHERE used < ? RETURNING used\`);
const peek = db.prepare('SELECT used FROM allowance WHERE client_key = ? AND day = ?');
const refund = db.prepare('UPDATE allowance SET used = used - 1 WHERE client_key = ? AND day = ? AND used > 0');
const insert = db.prepare('INSERT INTO receipts (${RECEIPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
function run(op) {
  if (op.op === 'consume') {
    const row = consume.get(op.clientKey, op.day, op.limit);
    if (row) return { allowed: true, used: row.used };
    const p = peek.get(op.clientKey, op.day);
    return { allowed: false, used: p ? p.used : 0 };
  }
  if (op.op === 'refund') { refund.run(op.clientKey, op.day); return null; }
  if (op.op === 'save') { insert.run(...op.args); return null; }
  throw new Error('unknown operation ' + op.op);
}
let queue = [];
let scheduled = false;
function flush() {
  scheduled = false;
  const ops = queue;
  queue = [];
  if (ops.length === 0) return;
  let out = [];
  try {
    db.transaction(() => {
      for (const op of ops) {
        try { out.push({ id: op.id, ok: true, value: run(op) }); }
        catch (e) { out.push({ id: op.id, ok: false, message: String(e && e.message || e), code: e && e.code }); }
      }
    }).immediate();
  } catch (e) {
    out = ops.map((op) => ({ id: op.id, ok: false, message: String(e && e.message || e), code: e && e.code }));
  }
  parentPort.postMessage(out);
}
parentPort.on('message', (op) => {
  if (op.op === 'close') { flush(); db.close(); parentPort.postMessage('closed'); parentPort.close(); return; }
  queue.push(op);
  if (!scheduled) { scheduled = true; setImmediate(flush); }
});
`;

type Settle = { resolve(v: unknown): void; reject(e: unknown): void };
type Outcome = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string; code?: string };

export function createSqliteOffloadStore(options: SqliteOffloadStoreOptions): SqliteStore {
  // The main connection creates/migrates the schema before the worker prepares its statements.
  const base = createSqliteStore({ ...options, groupCommit: false });
  const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      file: options.file,
      busyTimeoutMs,
      synchronous: options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL',
    },
  });
  // An idle writer must not keep the process alive; pending calls hold their own promises.
  worker.unref();
  const pending = new Map<number, Settle>();
  let nextId = 1;
  let failure: Error | null = null;
  let closing: Promise<void> | null = null;
  let closedSignal: (() => void) | null = null;

  const failAll = (err: Error) => {
    failure ??= err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('message', (msg: Outcome[] | 'closed') => {
    if (msg === 'closed') {
      closedSignal?.();
      return;
    }
    for (const o of msg) {
      const p = pending.get(o.id);
      if (!p) continue;
      pending.delete(o.id);
      if (o.ok) p.resolve(o.value);
      else p.reject(Object.assign(new Error(o.message), o.code ? { code: o.code } : {}));
    }
  });
  worker.on('error', (e) => failAll(e instanceof Error ? e : new Error(String(e))));
  worker.on('exit', () => {
    closedSignal?.();
    failAll(new Error('the store writer has stopped'));
  });

  const call = <T>(op: Record<string, unknown>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failure || closing) return reject(failure ?? new Error('the store is closed'));
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ id, ...op });
    });

  return {
    ...base,

    async consumeAllowance(clientKey: string, day: string, limit: number): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      if (limit === 0) return base.peekAllowance(clientKey, day, limit);
      const r = await call<{ allowed: boolean; used: number }>({ op: 'consume', clientKey, day, limit });
      return allowanceState(r.allowed, limit, r.used);
    },

    async refundAllowance(clientKey: string, day: string): Promise<void> {
      assertDay(day);
      await call({ op: 'refund', clientKey, day });
    },

    async saveReceipt(record: ReceiptRecord): Promise<void> {
      await call({ op: 'save', args: receiptValues(record) });
    },

    async health(): Promise<boolean> {
      return failure === null && closing === null && (await base.health());
    },

    close(): Promise<void> {
      closing ??= (async () => {
        if (failure === null) {
          // The writer commits what is queued, then stops; callers waiting on those writes resolve first.
          const stopped = new Promise<void>((resolve) => (closedSignal = resolve));
          worker.postMessage({ op: 'close' });
          await stopped;
        }
        await worker.terminate().catch(() => undefined);
        await base.close();
      })();
      return closing;
    },
  };
}
