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
 * The worker also signs the receipts given to it unsigned (signAndSaveReceipt), before
 * the transaction that stores them: the HTTP thread sends the message anyway, so the
 * signature leaves that thread without a hand-over of its own.
 */
import type { KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { allowanceState, assertDay, assertLimit, assertUnits, receiptValues } from './common.js';
import { createSqliteStore } from './sqlite.js';
import { LOG_APPEND_SOURCE, LOG_PENDING_SQL } from './log-sqlite.js';
import type { LogAppendBatch, LogPendingReceipt } from './log-store.js';
import { entryText } from '../log/entry.js';
import { ATTESTATION_CONTEXTS, canonicalJsonString, canonicalJsonValue, signedResponseText, signingInputOfText } from '../receipts/v1/attestation.js';
import { SQLITE_WRITE_SQL } from './sqlite-sql.js';
import type { SqliteStore, SqliteStoreOptions } from './sqlite.js';
import type { AllowanceState, DurationHistogram, ReceiptRecord, StoreWrite, UnsignedReceiptRecord, WalSyncStats } from './store.js';
import { DISK_SYNC_FAILED, StoreFaultError } from './faults.js';

export type SqliteOffloadStoreOptions = Omit<SqliteStoreOptions, 'groupCommit'> & {
  /**
   * The WAL file's bound (bytes, default 64 MiB). Under steady load the writer never finds the WAL fully
   * checkpointed when it begins a transaction, so SQLite never starts it over and it grows without end
   * (~350 MB in 12 s at 1,000 receipts/s); past this size the checkpointer makes it start over.
   */
  walLimitBytes?: number;
  /**
   * Give the WAL file its full size (walLimitBytes, as zeros) when the writer starts, so that no sync pays for
   * the file's growth (default true; ~65 ms of writes at a start).
   */
  preallocateWal?: boolean;
};

/** Upper bounds (seconds) of the WAL sync and WAL restart histograms (walSyncs(), walRestarts()). */
const WAL_SYNC_BOUNDS = [0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1] as const;

/**
 * Batches sent to the writer before its answer to the first: with one, each next batch waited for the HTTP
 * thread to take the writer's answer between two requests of its own (a round trip through a busy event
 * loop, while every request in it waited for the writer); with a few, the next batch is already on the writer
 * when it has committed, synced and answered one. With the sync on the writer, 4 measured above 2 and 1
 * (docs/BENCHMARKS.md).
 */
const MAX_IN_FLIGHT = 4;

/** See SqliteOffloadStoreOptions.walLimitBytes. */
const WAL_LIMIT_BYTES = 64 * 1024 * 1024;
/** How long a RESTART checkpoint may hold the writer back waiting for readers (ms). */
const RESTART_WAIT_MS = 50;

// The transparency log's queue read as CommonJS source: each queued receipt's entry encoded and the receipt
// hashed off the HTTP thread (the same entryText as src/log/entry.ts, evaluated from its source).
const LOG_PENDING_SOURCE = entryText.toString() + `
function createLogPending(db, sql) {
  const crypto = require('node:crypto');
  const pending = db.prepare(sql);
  return (limit) => pending.all(limit).map((r) => r.verification_id === null
    ? { seq: r.seq, verificationId: r.queued_id, record: null }
    : { seq: r.seq, verificationId: r.queued_id, record: null, entry: entryText(r.verification_id, r.task_id, r.agent_id, r.result, r.overall_ratio, r.verified_at,
        crypto.createHash('sha256').update(r.receipt, 'utf8').digest('hex')) });
}
`;

/** A duration's bucket in a histogram: the first upper bound (seconds) it does not exceed, else the last (+Inf). */
function bucketOf(bounds: readonly number[], seconds: number): number {
  let i = 0;
  while (i < bounds.length && seconds > (bounds[i] as number)) i++;
  return i;
}

// A duration histogram counted by a worker thread into shared memory, which the main thread reads when /metrics is
// scraped: no message per observation. Only one thread writes each histogram. Its buckets are found by the same
// bucketOf as the main thread's histograms, evaluated from its source.
const SHARED_HISTOGRAM_SOURCE =
  bucketOf.toString() +
  `
function sharedHistogram(data) {
  return { bounds: data.bounds, counts: new Int32Array(data.counts), sum: new Float64Array(data.sum) };
}
function observeShared(h, ms) {
  Atomics.add(h.counts, bucketOf(h.bounds, ms / 1000), 1);
  h.sum[0] += ms / 1000;
}
`;

/** The main thread's side of a histogram a worker counts into (SHARED_HISTOGRAM_SOURCE): what to hand over, and its reader. */
function createSharedHistogram(bounds: readonly number[]): { data: { bounds: readonly number[]; counts: SharedArrayBuffer; sum: SharedArrayBuffer }; read(): DurationHistogram } {
  const counts = new Int32Array(new SharedArrayBuffer(4 * (bounds.length + 1)));
  const sum = new Float64Array(new SharedArrayBuffer(8));
  return {
    data: { bounds, counts: counts.buffer as SharedArrayBuffer, sum: sum.buffer as SharedArrayBuffer },
    read: () => ({ bounds, counts: Array.from(counts, (_, i) => Atomics.load(counts, i)), sum: sum[0] as number }),
  };
}

// Plain CommonJS evaluated in the worker: no loader or build step involved, works from src/ and dist/ alike.
// Its statements are the ones src/store/sqlite.ts prepares (src/store/sqlite-sql.ts), handed over in workerData.
//
// Durability: with FULL the connection still runs at synchronous=NORMAL (a commit writes its WAL frames but does
// not sync them) and the worker syncs the WAL file itself after the batch's commit, before it answers, so
// "answered ⇒ on disk" holds exactly as with FULL, and one sync covers the whole batch. Only writes that must
// be durable wait for it (receipts, log appends); in a batch without them, allowance and refund writes are
// answered right after their commit: they are just as atomic and exact (single statements under the write
// lock, across processes too), and the next receipt's sync makes them durable as well; a power cut can at
// worst forget a few counted free calls, which is harmless.
// Receipts signed on this thread as they are stored (signAndSaveReceipt): the same signingInputOfText (with its
// two helpers) and signedResponseText as src/receipts/v1/attestation.ts, evaluated from their source, so the
// signature is over the bytes any signer derives and the stored text is the text the caller builds. Only the
// unsigned text crosses to this thread: its canonical form is made here, not on the HTTP thread, and one text is
// cloned, not two.
const SIGN_SOURCE = [signedResponseText, canonicalJsonString, canonicalJsonValue, signingInputOfText].map(String).join('\n') + `
const VERIFY_CONTEXT = ${JSON.stringify(ATTESTATION_CONTEXTS.verify)};
const signingKeys = new Map();
// Signs a save's receipt before the batch's transaction (the write lock is not held for it), and puts its
// signed text in the row. The first op for a key carries the key; the ones after it name it by its id. One
// entry per key object: both key rings keep one per key version across their re-reads, so this stays small.
function signOp(op) {
  const s = op.sign;
  if (s.key) signingKeys.set(s.keyId, s.key);
  const key = signingKeys.get(s.keyId);
  if (!key) throw new Error('no signing key ' + s.keyId + ' on the writer');
  // Row values in RECEIPT_COLUMNS order: key_version at 7, verified_at (the attestation's time) at 5, receipt at 8.
  const input = signingInputOfText(s.unsignedText, VERIFY_CONTEXT, op.args[7], op.args[5]);
  const signature = require('node:crypto').sign(null, Buffer.from(input, 'utf8'), key).toString('base64');
  op.args[8] = signedResponseText(s.unsignedText, op.args[7], op.args[5], signature);
  op.sign = null;
  op.signature = signature;
}
`;

const WORKER_SOURCE = LOG_APPEND_SOURCE + LOG_PENDING_SOURCE + SHARED_HISTOGRAM_SOURCE + SIGN_SOURCE + `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: workerData.busyTimeoutMs });
db.pragma('busy_timeout = ' + Math.trunc(workerData.busyTimeoutMs));
db.pragma('journal_mode = WAL');
// Past the setup the writer waits for the write lock itself (see beginImmediate): SQLite's own busy handler
// sleeps 1, 2, 5, 10, 15, 20… ms between tries, so a lock held 6 ms by the checkpointer's RESTART held the
// writer 8 ms, and one held 16 ms held it 19 ms, with every request's allowance and receipt queued behind.
db.pragma('busy_timeout = 0');
const BUSY_RETRY_MS = 0.25;
const sleepCell = new Int32Array(new SharedArrayBuffer(4));
/** Runs fn in a BEGIN IMMEDIATE transaction, trying for the write lock every BUSY_RETRY_MS until busyTimeoutMs. */
function beginImmediate(fn) {
  let started = false;
  const tx = db.transaction(() => { started = true; fn(); });
  const deadline = Date.now() + workerData.busyTimeoutMs;
  for (;;) {
    try { return tx.immediate(); } catch (e) {
      // Only a refused BEGIN is tried again: once fn ran, its outcomes are recorded and must not be repeated.
      if (started || !e || e.code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw e;
      Atomics.wait(sleepCell, 0, 0, BUSY_RETRY_MS);
    }
  }
}
const syncWal = workerData.synchronous === 'FULL';
db.pragma('synchronous = NORMAL');
// No checkpoints on the writer: an automatic checkpoint runs inside the commit that crosses the
// threshold and syncs the database file, stalling every receipt queued behind it for tens of ms.
// The checkpointer thread below does them instead, without taking the write lock.
db.pragma('wal_autocheckpoint = 0');
// When the checkpointer starts the WAL over, the first commit after it cuts the file back to this size:
// one file of bounded size, written over in place (no new blocks to allocate on each sync).
db.pragma('journal_size_limit = ' + Math.trunc(workerData.walLimitBytes));
const walFile = workerData.file + '-wal';
// SQLite deletes the WAL when the last connection closes, so every start begins with an empty file that
// grows, frame by frame, to its bound. While it grows, each sync must also commit the file system's journal
// (the new blocks and the new size): syncs were slower until the file had reached its bound and was written
// over in place (docs/BENCHMARKS.md). So the file is given its full size once, here, as zeros,
// before the first write: what SQLite then writes lands on blocks that already exist. Done under the write
// lock, so no connection (of this process or another) appends a frame meanwhile; bytes past the WAL's last
// valid frame are never read as frames (each frame's salt and checksum must match the header's), and the
// size never exceeds the journal_size_limit SQLite cuts the file back to.
function preallocateWal() {
  const limit = Math.trunc(workerData.walLimitBytes);
  if (!workerData.preallocateWal || limit <= 0) return;
  beginImmediate(() => {
    let fd;
    try { fd = fs.openSync(walFile, 'r+'); } catch { return; }
    try {
      const start = fs.fstatSync(fd).size;
      if (start >= limit) return;
      // Never the space the database itself needs: on a disk with less than twice the bound free, the file grows as before.
      const disk = fs.statfsSync(path.dirname(walFile));
      if (disk.bavail * disk.bsize < 2 * limit) return;
      const zeros = Buffer.alloc(Math.min(1 << 20, limit - start));
      let size = start;
      try {
        while (size < limit) size += fs.writeSync(fd, zeros, 0, Math.min(zeros.length, limit - size), size);
        fs.fdatasyncSync(fd);
      } catch (e) {
        // Out of space after all (another writer on the disk): give back what was taken.
        fs.ftruncateSync(fd, start);
        throw e;
      }
    } finally { fs.closeSync(fd); }
  });
}
try { preallocateWal(); } catch { /* only a speed-up: the WAL grows as before */ }
// Each WAL sync's duration (walSyncs()).
const walSyncs = sharedHistogram(workerData.walSyncs);
function timedSync(started) {
  observeShared(walSyncs, performance.now() - started);
}
let dirSynced = false;
// The same SQL text the main connection prepares (src/store/sqlite-sql.ts), passed in workerData.
const consume = db.prepare(workerData.sql.consume);
const peek = db.prepare(workerData.sql.peek);
const refund = db.prepare(workerData.sql.refund);
const insert = db.prepare(workerData.sql.insertReceipt);
const take = db.prepare(workerData.sql.take);
const refundUnits = db.prepare(workerData.sql.refundUnits);
// Nested in the group's transaction this is a savepoint: a batch's receipts are committed together or not at all.
const saveMany = db.transaction((rows) => { for (const r of rows) insert.run(...r); });
// A unit and its receipt, together or not at all (a savepoint in the batch's transaction).
const consumeSave = db.transaction((op) => {
  const row = consume.get(op.clientKey, op.day, op.limit);
  if (!row) { const p = peek.get(op.clientKey, op.day); return { allowed: false, used: p ? p.used : 0 }; }
  insert.run(...op.args);
  return { allowed: true, used: row.used };
});
// Transparency-log appends on this connection too (see log-sqlite.ts): no second writer to wait for.
const logAppend = createLogAppend(db);
// The log's queue read, here only when the checkpointer thread (which normally serves it) has stopped.
const logPending = createLogPending(db, workerData.pendingSql);
function run(op) {
  if (op.op === 'consume') {
    const row = consume.get(op.clientKey, op.day, op.limit);
    if (row) return { allowed: true, used: row.used };
    const p = peek.get(op.clientKey, op.day);
    return { allowed: false, used: p ? p.used : 0 };
  }
  if (op.op === 'take') {
    const row = take.get(op.clientKey, op.day, op.units, op.limit);
    if (row) return { allowed: true, used: row.used };
    const p = peek.get(op.clientKey, op.day);
    return { allowed: false, used: p ? p.used : 0 };
  }
  if (op.op === 'refund') { refund.run(op.clientKey, op.day); return null; }
  if (op.op === 'refundUnits') { refundUnits.run(op.units, op.clientKey, op.day); return null; }
  if (op.op === 'save') { insert.run(...op.args); return op.signature ?? null; }
  if (op.op === 'consumeSave') {
    const r = consumeSave(op);
    return op.signature === undefined ? r : { allowed: r.allowed, used: r.used, signature: op.signature };
  }
  if (op.op === 'saveMany') { saveMany(op.rows); return null; }
  if (op.op === 'logAppend') return logAppend(op.batch);
  if (op.op === 'logPending') return logPending(op.limit);
  throw new Error('unknown operation ' + op.op);
}
const failed = (id, e) => ({ id, ok: false, message: String(e && e.message || e), code: e && e.code });
// The answer of a committed write once its sync is done (err: the sync failed; the write is committed, not durable).
const synced = (s, err) => (err ? { ...failed(s.id, err), committed: true } : { id: s.id, ok: true, value: s.value });
// The WAL stays open between syncs: no open and close around each one. SQLite keeps the WAL file
// (same inode) while any connection is open, as this one is; a stat of the path per sync still makes
// sure the descriptor is the file SQLite writes now, and a different or missing file is opened anew.
let walFd = null;
let walIno = null;
function closeWal() {
  if (walFd === null) return;
  try { fs.closeSync(walFd); } catch {}
  walFd = null;
}
/** The WAL's descriptor, opened anew when the path no longer names the file it has open. */
function openWal() {
  let ino = null;
  try { ino = fs.statSync(walFile).ino; } catch {}
  if (walFd !== null && ino !== null && ino === walIno) return walFd;
  closeWal();
  const fd = fs.openSync(walFile, 'r');
  walIno = fs.fstatSync(fd).ino;
  walFd = fd;
  return fd;
}
/**
 * Syncs the WAL (and, the first time, its directory entry, as SQLite does for a new WAL) on this thread;
 * the error of the WAL's sync, or null.
 */
function syncWalNow() {
  const started = performance.now();
  let err = null;
  try { fs.fdatasyncSync(openWal()); } catch (e) { err = e; closeWal(); }
  timedSync(started);
  if (err === null && !dirSynced) {
    try {
      const dirFd = fs.openSync(path.dirname(walFile), 'r');
      try { fs.fsyncSync(dirFd); dirSynced = true; } finally { fs.closeSync(dirFd); }
    } catch { /* tried again at the next sync */ }
  }
  return err;
}
// The database file must still be the one this store opened: a removed or replaced file would take
// commits that no restart ever sees. Checked here, after each batch's commit (a stat per batch on this
// thread, not several per request on the HTTP thread); a batch committed into a lost file is answered as
// a fault, never acknowledged. (A check before the commit too would only spare writes into a file that
// is lost either way.)
function fileProblem() {
  if (!workerData.identity) return null;
  let now;
  try { now = fs.statSync(workerData.file, { bigint: true }); } catch { return 'database file removed'; }
  if (String(now.ino) !== workerData.identity.ino || String(now.dev) !== workerData.identity.dev) return 'database file replaced';
  return null;
}
const fileFault = (id, reason) => ({ id, ok: false, message: reason, code: 'STORE_FILE' });
let queue = [];
let scheduled = false;
let received = 0;
function flush() {
  scheduled = false;
  const ops = queue;
  queue = [];
  const taken = received;
  received = 0;
  if (ops.length === 0) return;
  let out = [];
  const saved = [];
  // The log's queue read (and the hashing of each queued receipt) is a read: done before the write
  // transaction, so neither the write lock nor the commit of the receipts in this batch waits for it.
  const reads = [];
  const writes = [];
  for (const op of ops) {
    if (op.sign) {
      // A receipt that cannot be signed is not stored: answered with the error, nothing written.
      try { signOp(op); } catch (e) { reads.push(failed(op.id, e)); continue; }
    }
    if (op.op !== 'logPending') { writes.push(op); continue; }
    try { reads.push({ id: op.id, ok: true, value: run(op) }); } catch (e) { reads.push(failed(op.id, e)); }
  }
  if (writes.length > 0) {
    try {
      beginImmediate(() => {
        for (const op of writes) {
          try {
            const value = run(op);
            // A log append that took (value true) is answered after the sync whatever the setting: a published
            // checkpoint must never be lost, or it could be re-signed differently (a fork).
            // A refused consumeSave wrote nothing: answered at once.
            const stored = op.op === 'save' || op.op === 'saveMany' || (op.op === 'consumeSave' && value.allowed);
            if ((stored && syncWal) || (op.op === 'logAppend' && value === true)) saved.push({ id: op.id, value });
            else out.push({ id: op.id, ok: true, value });
          } catch (e) { out.push(failed(op.id, e)); }
        }
      });
    } catch (e) {
      out = writes.map((op) => failed(op.id, e));
      saved.length = 0;
    }
  }
  out = reads.concat(out);
  const after = fileProblem();
  if (after !== null) {
    out = ops.map((op) => fileFault(op.id, after));
    saved.length = 0;
  }
  // The batch's WAL sync is made here, on the writer, before it answers: the answer of every write in it and
  // "send the next batch" go in one message. Handing large batches' syncs to libuv's thread pool, so that the
  // next commits need not wait for them, cost more than it saved: two more thread wake-ups and a second message
  // to the HTTP thread per batch. Without them: median 1.13x the throughput at saturation, 9% less CPU per
  // request (docs/BENCHMARKS.md).
  // Meanwhile the next messages queue up and make the next batch.
  if (saved.length > 0) {
    const err = syncWalNow();
    for (const s of saved) out.push(synced(s, err));
  }
  parentPort.postMessage({ flushed: out, batches: taken });
}
parentPort.on('message', (op) => {
  if (op.op === 'close') {
    // What is queued is committed, synced and answered first; then the connection closes.
    flush();
    closeWal();
    db.close();
    parentPort.postMessage('closed');
    parentPort.close();
    return;
  }
  for (const o of op) queue.push(o);
  received++;
  if (!scheduled) { scheduled = true; setImmediate(flush); }
});
`;

// A PASSIVE checkpoint copies committed WAL frames into the database file without blocking the
// writer. SQLite starts the WAL over only when a write transaction begins with every frame already
// copied, which under steady load never happens (the writer appends while the copy runs): so once
// the WAL is past its bound, a RESTART checkpoint follows the PASSIVE one. It holds the writer back
// while it copies the few frames written during the PASSIVE copy and syncs the database file, then
// the writer's next commit starts the WAL over (and cuts the file to the bound). A RESTART also
// waits for every reader of an older snapshot (a long query, a backup) while it holds the writer
// back, so it waits at most RESTART_WAIT_MS and otherwise gives up until the next tick.
//
// SQLite syncs the database file only at the end of a checkpoint that copied every frame, which
// under steady load only a RESTART does: it then synced all that the PASSIVE checkpoints had copied
// since the last one (tens of MB, left to the kernel's write-back meanwhile) while it held the
// writer, 17-57 ms under load. So this thread syncs the database file itself after each PASSIVE
// that copied frames, holding no lock, and a RESTART is left with a tick's worth (1.5-4.4 ms).
// Durability does not depend on it: until the WAL starts over, its frames are still there.
const CHECKPOINTER_SOURCE = LOG_PENDING_SOURCE + SHARED_HISTOGRAM_SOURCE + `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: workerData.restartWaitMs });
db.pragma('busy_timeout = ' + Math.trunc(workerData.restartWaitMs));
db.pragma('synchronous = ' + workerData.synchronous);
const pageSize = db.pragma('page_size', { simple: true });
// The log's queue read is served here, a reader beside the writer: reading back and hashing a batch of
// receipts took 2-14 ms, and on the writer every allowance and receipt that arrived meanwhile waited.
const logPending = createLogPending(db, workerData.pendingSql);
// How long each RESTART held the writer back (walRestarts()).
const walRestarts = sharedHistogram(workerData.walRestarts);
let dbFd = null;
// The WAL's backfilled frame count at the last sync of the database file.
let syncedFrames = 0;
function closeDb() {
  if (dbFd === null) return;
  try { fs.closeSync(dbFd); } catch {}
  dbFd = null;
}
function syncDatabaseFile(checkpointed) {
  if (checkpointed === 0 || checkpointed === syncedFrames) return;
  try {
    if (dbFd === null) dbFd = fs.openSync(workerData.file, 'r');
    fs.fdatasyncSync(dbFd);
    syncedFrames = checkpointed;
  } catch { closeDb(); /* the next tick tries again; the RESTART's own sync still covers it */ }
}
const timer = setInterval(() => {
  try {
    const [state] = db.pragma('wal_checkpoint(PASSIVE)');
    if (!state) return;
    syncDatabaseFile(state.checkpointed);
    if (state.log * pageSize > workerData.walLimitBytes) {
      const started = performance.now();
      try { db.pragma('wal_checkpoint(RESTART)'); } finally { observeShared(walRestarts, performance.now() - started); }
    }
  } catch { /* busy or closing: the next tick tries again */ }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'close') { clearInterval(timer); closeDb(); db.close(); parentPort.postMessage('closed'); parentPort.close(); return; }
  try { parentPort.postMessage({ id: m.id, ok: true, value: logPending(m.limit) }); } catch (e) { parentPort.postMessage({ id: m.id, ok: false, message: String(e && e.message || e) }); }
});
`;

/** A call waiting for its answer; a write to the writer thread also records what it writes and when it was issued (writeWaits()). */
type Settle = { resolve(v: unknown): void; reject(e: unknown): void; write?: StoreWrite; issued?: number };

/** Upper bounds (seconds) of the write-wait histograms (writeWaits()): from a commit's fraction of a millisecond to a stalled disk. */
const WRITE_WAIT_BOUNDS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1] as const;

/** What each writer operation writes, for its wait's histogram. */
const WRITE_OF: Readonly<Record<string, StoreWrite>> = {
  consume: 'allowance',
  take: 'allowance',
  refund: 'allowance',
  refundUnits: 'allowance',
  save: 'receipt',
  saveMany: 'receipt',
  consumeSave: 'receipt',
  logAppend: 'log',
};

const emptyHistogram = (): DurationHistogram => ({ bounds: WRITE_WAIT_BOUNDS, counts: new Array<number>(WRITE_WAIT_BOUNDS.length + 1).fill(0), sum: 0 });

function observe(h: DurationHistogram, seconds: number): void {
  (h.counts[bucketOf(h.bounds, seconds)] as number)++;
  h.sum += seconds;
}

type Outcome = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string; code?: string; committed?: true };

/** Settles the call an answer from the writer or the checkpointer belongs to (none: already settled). */
function settle(calls: Map<number, Settle>, o: Outcome, waits?: Record<StoreWrite, DurationHistogram>): void {
  const p = calls.get(o.id);
  if (!p) return;
  calls.delete(o.id);
  if (waits && p.write !== undefined && p.issued !== undefined) observe(waits[p.write], (performance.now() - p.issued) / 1000);
  if (o.ok) p.resolve(o.value);
  else if (o.code === 'STORE_FILE') p.reject(new StoreFaultError(o.message));
  // committed: the write's commit went through but its WAL sync did not (see synced in the writer). It is
  // not durable, so it is a store fault (a 503, never an acknowledgement), whatever errno the sync gave.
  else if (o.committed) p.reject(Object.assign(new StoreFaultError(DISK_SYNC_FAILED), { committed: true, cause: o.message }, o.code ? { code: o.code } : {}));
  else p.reject(Object.assign(new Error(o.message), o.code ? { code: o.code } : {}));
}

export function createSqliteOffloadStore(options: SqliteOffloadStoreOptions): SqliteStore {
  // The main connection creates/migrates the schema before the worker prepares its statements.
  const base = createSqliteStore({ ...options, groupCommit: false });
  const busyTimeoutMs = options.busyTimeoutMs ?? 10_000;
  const connection = {
    driver: createRequire(import.meta.url).resolve('better-sqlite3'),
    file: options.file,
    busyTimeoutMs,
    synchronous: options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL',
    walLimitBytes: options.walLimitBytes ?? WAL_LIMIT_BYTES,
  };
  const identity = base.fileIdentity();
  const walSyncs = createSharedHistogram(WAL_SYNC_BOUNDS);
  const walRestarts = createSharedHistogram(WAL_SYNC_BOUNDS);
  // Both threads' garbage is short-lived and small (messages, rows): V8's default young generation (up to
  // 16 MB of new space each under load) only holds memory. 4 MB cost no measurable CPU and 10-19 MB of peak RSS less.
  const resourceLimits = { maxYoungGenerationSizeMb: 4 };
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    resourceLimits,
    workerData: { ...connection, sql: SQLITE_WRITE_SQL, identity, pendingSql: LOG_PENDING_SQL, walSyncs: walSyncs.data, preallocateWal: options.preallocateWal !== false },
  });
  // An idle writer must not keep the process alive; pending calls hold their own promises.
  worker.unref();
  const checkpointer = new Worker(CHECKPOINTER_SOURCE, {
    eval: true,
    resourceLimits,
    workerData: { ...connection, intervalMs: 200, restartWaitMs: RESTART_WAIT_MS, pendingSql: LOG_PENDING_SQL, walRestarts: walRestarts.data },
  });
  checkpointer.unref();
  // Log-queue reads waiting for the checkpointer; once it has stopped they go to the writer instead.
  const reads = new Map<number, Settle>();
  let nextReadId = 1;
  let readerUp = true;
  const readerDown = () => {
    readerUp = false;
    for (const r of reads.values()) r.reject(new Error('the log queue reader has stopped'));
    reads.clear();
  };
  const checkpointerClosed = new Promise<void>((resolve) => {
    checkpointer.on('message', (m: 'closed' | Outcome) => {
      if (m === 'closed') resolve();
      else settle(reads, m);
    });
    const stopped = () => {
      readerDown();
      resolve();
    };
    checkpointer.on('exit', stopped);
    // A failed checkpointer only lets the WAL grow until the next start; it never loses a write.
    checkpointer.on('error', stopped);
  });
  const pending = new Map<number, Settle>();
  // Measured here, on the calling thread, where a request waits: no message or shared memory needed.
  const waits: Record<StoreWrite, DurationHistogram> = { allowance: emptyHistogram(), receipt: emptyHistogram(), log: emptyHistogram() };
  let nextId = 1;
  let failure: Error | null = null;
  let closing: Promise<void> | null = null;
  let closedSignal: (() => void) | null = null;

  const failAll = (err: Error) => {
    failure ??= err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('message', (msg: { flushed: Outcome[]; batches: number } | 'closed') => {
    if (msg === 'closed') {
      closedSignal?.();
      return;
    }
    inFlight -= msg.batches;
    post();
    for (const o of msg.flushed) settle(pending, o, waits);
  });
  worker.on('error', (e) => failAll(e instanceof Error ? e : new Error(String(e))));
  worker.on('exit', () => {
    closedSignal?.();
    failAll(new Error('the store writer has stopped'));
  });

  // Operations go to the worker in batches, at most MAX_IN_FLIGHT batches unanswered: what is issued past that
  // waits for an answer and goes with the next. Each message costs a structured clone and a cross-thread
  // wake-up (≈15 µs of main-thread time on a busy machine), which per operation cost more than the writes
  // themselves. The writer takes every message that arrived before its next commit into that commit and says
  // how many it took (`batches`).
  let outbox: Array<Record<string, unknown>> = [];
  let inFlight = 0;
  let scheduled = false;
  const post = () => {
    scheduled = false;
    if (inFlight >= MAX_IN_FLIGHT || outbox.length === 0) return;
    const ops = outbox;
    outbox = [];
    inFlight++;
    worker.postMessage(ops);
  };
  const call = <T>(op: Record<string, unknown>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failure || closing) return reject(failure ?? new Error('the store is closed'));
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject, write: WRITE_OF[op.op as string], issued: performance.now() });
      op.id = id;
      outbox.push(op);
      if (inFlight < MAX_IN_FLIGHT && !scheduled) {
        scheduled = true;
        setImmediate(post);
      }
    });

  // A unit taken with its receipt. Committed but not synced: the unit was taken for an answer that will be
  // an error, so it goes back.
  const consumeSave = async <T>(op: { op: 'consumeSave'; clientKey: string; day: string } & Record<string, unknown>): Promise<T> => {
    try {
      return await call<T>(op);
    } catch (e) {
      if ((e as { committed?: boolean }).committed) await call({ op: 'refund', clientKey: op.clientKey, day: op.day }).catch(() => undefined);
      throw e;
    }
  };

  // Each signing key crosses to the writer once, with the first receipt it signs there; later ones name its id.
  const keyIds = new WeakMap<KeyObject, number>();
  let nextKeyId = 1;
  const signedSave = (record: UnsignedReceiptRecord, key: KeyObject) => {
    let keyId = keyIds.get(key);
    const first = keyId === undefined;
    if (keyId === undefined) {
      keyId = nextKeyId++;
      keyIds.set(key, keyId);
    }
    // receiptValues takes the row's columns only: a signing input the draft may carry stays on this thread.
    const { unsignedText, ...facts } = record;
    return { args: receiptValues({ ...facts, receipt: '' }), sign: { keyId, key: first ? key : undefined, unsignedText } };
  };

  return {
    ...base,

    walSyncs(): WalSyncStats {
      return walSyncs.read();
    },

    walRestarts(): DurationHistogram {
      return walRestarts.read();
    },

    writeWaits(): Record<StoreWrite, DurationHistogram> {
      const copy = (h: DurationHistogram): DurationHistogram => ({ bounds: h.bounds, counts: [...h.counts], sum: h.sum });
      return { allowance: copy(waits.allowance), receipt: copy(waits.receipt), log: copy(waits.log) };
    },

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

    async consumeAllowanceAndSaveReceipt(clientKey: string, day: string, limit: number, record: ReceiptRecord): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      if (limit === 0) return base.peekAllowance(clientKey, day, limit);
      const r = await consumeSave<{ allowed: boolean; used: number }>({ op: 'consumeSave', clientKey, day, limit, args: receiptValues(record) });
      return allowanceState(r.allowed, limit, r.used);
    },

    async saveReceipt(record: ReceiptRecord): Promise<void> {
      // The writer answers only once the commit is in a file that is still the database (see fileProblem).
      await call({ op: 'save', args: receiptValues(record) });
    },

    signAndSaveReceipt(record: UnsignedReceiptRecord, key: KeyObject): Promise<string> {
      return call<string>({ op: 'save', ...signedSave(record, key) });
    },

    async consumeAllowanceAndSignAndSaveReceipt(
      clientKey: string,
      day: string,
      limit: number,
      record: UnsignedReceiptRecord,
      key: KeyObject,
    ): Promise<AllowanceState & { signature: string | null }> {
      assertDay(day);
      assertLimit(limit);
      if (limit === 0) return { ...(await base.peekAllowance(clientKey, day, limit)), signature: null };
      const r = await consumeSave<{ allowed: boolean; used: number; signature: string }>({ op: 'consumeSave', clientKey, day, limit, ...signedSave(record, key) });
      return { ...allowanceState(r.allowed, limit, r.used), signature: r.allowed ? r.signature : null };
    },

    async takeAllowance(clientKey: string, day: string, limit: number, units: number): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      assertUnits(units);
      if (units > limit) return base.peekAllowance(clientKey, day, limit).then((st) => ({ ...st, allowed: false }));
      const r = await call<{ allowed: boolean; used: number }>({ op: 'take', clientKey, day, limit, units });
      return allowanceState(r.allowed, limit, r.used);
    },

    async refundAllowanceUnits(clientKey: string, day: string, units: number): Promise<void> {
      assertDay(day);
      assertUnits(units);
      await call({ op: 'refundUnits', clientKey, day, units });
    },

    async saveReceipts(records: readonly ReceiptRecord[]): Promise<void> {
      if (records.length === 0) return;
      const rows = records.map(receiptValues);
      await call({ op: 'saveMany', rows });
    },

    logAppend(batch: LogAppendBatch): Promise<boolean> {
      return call<boolean>({ op: 'logAppend', batch });
    },

    logPending(limit: number): Promise<LogPendingReceipt[]> {
      if (!readerUp || closing) return call<LogPendingReceipt[]>({ op: 'logPending', limit });
      return new Promise<LogPendingReceipt[]>((resolve, reject) => {
        const id = nextReadId++;
        reads.set(id, { resolve: resolve as (v: unknown) => void, reject });
        checkpointer.postMessage({ id, limit });
      });
    },

    async health(): Promise<boolean> {
      return failure === null && closing === null && (await base.health());
    },

    async check(): Promise<string | null> {
      if (failure) return 'store writer stopped';
      if (closing) return 'store closed';
      return base.check!();
    },

    close(): Promise<void> {
      closing ??= (async () => {
        if (failure === null) {
          // The writer commits what is queued, then stops; callers waiting on those writes resolve first.
          const stopped = new Promise<void>((resolve) => (closedSignal = resolve));
          // Whatever still waits for the batch in flight goes now; the worker takes messages in order.
          const ops = outbox;
          outbox = [];
          if (ops.length > 0) worker.postMessage(ops);
          worker.postMessage({ op: 'close' });
          await stopped;
        }
        await worker.terminate().catch(() => undefined);
        checkpointer.postMessage('close');
        await checkpointerClosed;
        await checkpointer.terminate().catch(() => undefined);
        await base.close();
      })();
      return closing;
    },
  };
}
