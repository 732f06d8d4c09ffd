/**
 * @module The SQLite store's writer thread (started by sqlite-offload.ts, which explains why): its own
 * connection, on which it commits whatever arrived since its last commit as one transaction (group
 * commit), syncs the WAL, and answers. The statements are the ones the main connection prepares
 * (sqlite-sql.ts), handed over in the worker data. Receipts given to it unsigned are signed here, by
 * receipts code (signVerifyText), before the transaction that stores them.
 *
 * Durability: with FULL the connection still runs at synchronous=NORMAL (a commit writes its WAL frames
 * but does not sync them) and this thread syncs the WAL file itself after the batch's commit, before it
 * answers, so "answered ⇒ on disk" holds exactly as with FULL, and one sync covers the whole batch. Only
 * writes that must be durable wait for it (receipts, log appends); in a batch without them, allowance and
 * refund writes are answered right after their commit: they are just as atomic and exact (single
 * statements under the write lock, across processes too), and the next receipt's sync makes them durable
 * as well; a power cut can at worst forget a few counted free calls, which is harmless.
 *
 * Imports only what it runs (the log's SQLite operations, the receipt signer, the shared message types):
 * a writer thread must start fast and small.
 */
import type { KeyObject } from 'node:crypto';
import { closeSync, fdatasyncSync, fstatSync, fsyncSync, ftruncateSync, openSync, statfsSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { workerData } from 'node:worker_threads';
import { signVerifyText } from '../receipts/v1/sign-text.js';
import { createLogAppend, createLogPending } from './log-sqlite-ops.js';
import {
  closeQuietly,
  failed,
  sharedHistogramObserver,
  startWorker,
  type AllowanceReply,
  type Outcome,
  type WriterData,
  type WriterMessage,
  type WriterOp,
} from './sqlite-worker-protocol.js';

const data = workerData as WriterData;
const { port, db } = startWorker('sqlite-writer-worker', data, data.busyTimeoutMs);

/** Indexes of a receipt row's values (RECEIPT_COLUMNS order): the attestation's time, the key version, the receipt text. */
const VERIFIED_AT = 5;
const KEY_VERSION = 7;
const RECEIPT = 8;

db.pragma('journal_mode = WAL');
// Past the setup the writer waits for the write lock itself (see beginImmediate): SQLite's own busy handler
// sleeps 1, 2, 5, 10, 15, 20… ms between tries, so a lock held 6 ms by the checkpointer's RESTART held the
// writer 8 ms, and one held 16 ms held it 19 ms, with every request's allowance and receipt queued behind.
db.pragma('busy_timeout = 0');
const BUSY_RETRY_MS = 0.25;
const sleepCell = new Int32Array(new SharedArrayBuffer(4));

/** Runs fn in a BEGIN IMMEDIATE transaction, trying for the write lock every BUSY_RETRY_MS until busyTimeoutMs. */
function beginImmediate(fn: () => void): void {
  let started = false;
  const tx = db.transaction(() => {
    started = true;
    fn();
  });
  const deadline = Date.now() + data.busyTimeoutMs;
  for (;;) {
    try {
      return tx.immediate();
    } catch (e) {
      // Only a refused BEGIN is tried again: once fn ran, its outcomes are recorded and must not be repeated.
      if (started || !e || (e as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw e;
      Atomics.wait(sleepCell, 0, 0, BUSY_RETRY_MS);
    }
  }
}

const syncAfterCommit = data.synchronous === 'FULL';
db.pragma('synchronous = NORMAL');
// No checkpoints on the writer: an automatic checkpoint runs inside the commit that crosses the
// threshold and syncs the database file, stalling every receipt queued behind it for tens of ms.
// The checkpointer thread does them instead, without taking the write lock.
db.pragma('wal_autocheckpoint = 0');
// When the checkpointer starts the WAL over, the first commit after it cuts the file back to this size:
// one file of bounded size, written over in place (no new blocks to allocate on each sync).
db.pragma('journal_size_limit = ' + Math.trunc(data.walLimitBytes));
const walFile = data.file + '-wal';

/**
 * SQLite deletes the WAL when the last connection closes, so every start begins with an empty file that
 * grows, frame by frame, to its bound. While it grows, each sync must also commit the file system's journal
 * (the new blocks and the new size): syncs were slower until the file had reached its bound and was written
 * over in place (docs/BENCHMARKS.md). So the file is given its full size once, here, as zeros, before the
 * first write: what SQLite then writes lands on blocks that already exist. Done under the write lock, so no
 * connection (of this process or another) appends a frame meanwhile; bytes past the WAL's last valid frame
 * are never read as frames (each frame's salt and checksum must match the header's), and the size never
 * exceeds the journal_size_limit SQLite cuts the file back to.
 */
function preallocateWal(): void {
  const limit = Math.trunc(data.walLimitBytes);
  if (!data.preallocateWal || limit <= 0) return;
  beginImmediate(() => {
    let fd: number;
    try {
      fd = openSync(walFile, 'r+');
    } catch {
      return;
    }
    try {
      const start = fstatSync(fd).size;
      if (start >= limit) return;
      // Never the space the database itself needs: on a disk with less than twice the bound free, the file grows as before.
      const disk = statfsSync(dirname(walFile));
      if (disk.bavail * disk.bsize < 2 * limit) return;
      const zeros = Buffer.alloc(Math.min(1 << 20, limit - start));
      let size = start;
      try {
        while (size < limit) size += writeSync(fd, zeros, 0, Math.min(zeros.length, limit - size), size);
        fdatasyncSync(fd);
      } catch (e) {
        // Out of space after all (another writer on the disk): give back what was taken.
        ftruncateSync(fd, start);
        throw e;
      }
    } finally {
      closeSync(fd);
    }
  });
}
try {
  preallocateWal();
} catch {
  /* only a speed-up: the WAL grows as before */
}

// Each WAL sync's duration (walSyncs()).
const observeWalSync = sharedHistogramObserver(data.walSyncs);
let dirSynced = false;
const consume = db.prepare(data.sql.consume);
const peek = db.prepare(data.sql.peek);
const refund = db.prepare(data.sql.refund);
const insert = db.prepare(data.sql.insertReceipt);
const take = db.prepare(data.sql.take);
const refundUnits = db.prepare(data.sql.refundUnits);
// Nested in the group's transaction this is a savepoint: a batch's receipts are committed together or not at all.
const saveMany = db.transaction((rows: unknown[][]) => {
  for (const r of rows) insert.run(...r);
});
// A unit and its receipt, together or not at all (a savepoint in the batch's transaction).
const consumeSave = db.transaction((clientKey: string, day: string, limit: number, args: unknown[]): AllowanceReply => {
  const row = consume.get(clientKey, day, limit) as { used: number } | undefined;
  if (!row) return { allowed: false, used: usedOf(clientKey, day) };
  insert.run(...args);
  return { allowed: true, used: row.used };
});
// Transparency-log appends on this connection too (see log-sqlite.ts): no second writer to wait for.
const logAppend = createLogAppend(db);
// The log's queue read, here only when the checkpointer thread (which normally serves it) has stopped.
const logPending = createLogPending(db);

function usedOf(clientKey: string, day: string): number {
  const p = peek.get(clientKey, day) as { used: number } | undefined;
  return p ? p.used : 0;
}

// One entry per key object: both key rings keep one per key version across their re-reads, so this stays small.
const signingKeys = new Map<number, KeyObject>();

/**
 * Signs a save's receipt before the batch's transaction (the write lock is not held for it) and puts its
 * signed text in the row; returns that text, which is answered as is (the main thread builds no copy).
 * The first op for a key carries the key; the ones after it name it by its id.
 */
function signOp(op: Extract<WriterOp, { op: 'save' | 'consumeSave' }>): string | undefined {
  const s = op.sign;
  if (!s) return undefined;
  if (s.key) signingKeys.set(s.keyId, s.key);
  const key = signingKeys.get(s.keyId);
  if (!key) throw new Error('no signing key ' + s.keyId + ' on the writer');
  const signed = signVerifyText(s.unsignedText, op.args[KEY_VERSION] as string, op.args[VERIFIED_AT] as string, key);
  op.args[RECEIPT] = signed.text;
  return signed.text;
}

/** Runs one operation; `signed` is the receipt text signOp made for it. */
function run(op: WriterOp, signed: string | undefined): unknown {
  switch (op.op) {
    case 'consume': {
      const row = consume.get(op.clientKey, op.day, op.limit) as { used: number } | undefined;
      if (row) return { allowed: true, used: row.used } satisfies AllowanceReply;
      return { allowed: false, used: usedOf(op.clientKey, op.day) } satisfies AllowanceReply;
    }
    case 'take': {
      const row = take.get(op.clientKey, op.day, op.units, op.limit) as { used: number } | undefined;
      if (row) return { allowed: true, used: row.used } satisfies AllowanceReply;
      return { allowed: false, used: usedOf(op.clientKey, op.day) } satisfies AllowanceReply;
    }
    case 'refund':
      refund.run(op.clientKey, op.day);
      return null;
    case 'refundUnits':
      refundUnits.run(op.units, op.clientKey, op.day);
      return null;
    case 'save':
      insert.run(...op.args);
      return signed ?? null;
    case 'consumeSave': {
      const r = consumeSave(op.clientKey, op.day, op.limit, op.args);
      return signed === undefined ? r : ({ allowed: r.allowed, used: r.used, receipt: signed } satisfies AllowanceReply);
    }
    case 'saveMany':
      saveMany(op.rows);
      return null;
    case 'logAppend':
      return logAppend(op.batch);
    case 'logPending':
      return logPending(op.limit);
    default:
      throw new Error('unknown operation ' + (op as { op: unknown }).op);
  }
}

/** The answer of a committed write once its sync is done (err: the sync failed; the write is committed, not durable). */
function synced(s: { id: number; value: unknown }, err: unknown): Outcome {
  return err ? { ...failed(s.id, err), committed: true } : { id: s.id, ok: true, value: s.value };
}

// The WAL stays open between syncs: no open and close around each one. SQLite keeps the WAL file
// (same inode) while any connection is open, as this one is; a stat of the path per sync still makes
// sure the descriptor is the file SQLite writes now, and a different or missing file is opened anew.
let walFd: number | null = null;
let walIno: number | null = null;
function closeWal(): void {
  if (walFd === null) return;
  closeQuietly(walFd);
  walFd = null;
}
/** The WAL's descriptor, opened anew when the path no longer names the file it has open. */
function openWal(): number {
  let ino: number | null = null;
  try {
    ino = statSync(walFile).ino;
  } catch {
    /* missing: opened below, which throws */
  }
  if (walFd !== null && ino !== null && ino === walIno) return walFd;
  closeWal();
  const fd = openSync(walFile, 'r');
  walIno = fstatSync(fd).ino;
  walFd = fd;
  return fd;
}

/**
 * Syncs the WAL (and, the first time, its directory entry, as SQLite does for a new WAL) on this thread;
 * the error of the WAL's sync, or null.
 */
function syncWalNow(): unknown {
  const started = performance.now();
  let err: unknown = null;
  try {
    fdatasyncSync(openWal());
  } catch (e) {
    err = e;
    closeWal();
  }
  observeWalSync(performance.now() - started);
  if (err === null && !dirSynced) {
    try {
      const dirFd = openSync(dirname(walFile), 'r');
      try {
        fsyncSync(dirFd);
        dirSynced = true;
      } finally {
        closeSync(dirFd);
      }
    } catch {
      /* tried again at the next sync */
    }
  }
  return err;
}

/**
 * The database file must still be the one this store opened: a removed or replaced file would take
 * commits that no restart ever sees. Checked here, after each batch's commit (a stat per batch on this
 * thread, not several per request on the HTTP thread); a batch committed into a lost file is answered as
 * a fault, never acknowledged. (A check before the commit too would only spare writes into a file that
 * is lost either way.)
 */
function fileProblem(): string | null {
  if (!data.identity) return null;
  let now;
  try {
    now = statSync(data.file, { bigint: true });
  } catch {
    return 'database file removed';
  }
  if (String(now.ino) !== data.identity.ino || String(now.dev) !== data.identity.dev) return 'database file replaced';
  return null;
}
const fileFault = (id: number, reason: string): Outcome => ({ id, ok: false, message: reason, code: 'STORE_FILE' });

let queue: WriterOp[] = [];
let scheduled = false;
let received = 0;

function flush(): void {
  scheduled = false;
  const ops = queue;
  queue = [];
  const taken = received;
  received = 0;
  if (ops.length === 0) return;
  let out: Outcome[] = [];
  const saved: Array<{ id: number; value: unknown }> = [];
  // The log's queue read (and the hashing of each queued receipt) is a read: done before the write
  // transaction, so neither the write lock nor the commit of the receipts in this batch waits for it.
  const reads: Outcome[] = [];
  const writes: Array<{ op: WriterOp; signed: string | undefined }> = [];
  for (const op of ops) {
    let signed: string | undefined;
    if (op.op === 'save' || op.op === 'consumeSave') {
      // A receipt that cannot be signed is not stored: answered with the error, nothing written.
      try {
        signed = signOp(op);
      } catch (e) {
        reads.push(failed(op.id, e));
        continue;
      }
    }
    if (op.op !== 'logPending') {
      writes.push({ op, signed });
      continue;
    }
    try {
      reads.push({ id: op.id, ok: true, value: run(op, undefined) });
    } catch (e) {
      reads.push(failed(op.id, e));
    }
  }
  if (writes.length > 0) {
    try {
      beginImmediate(() => {
        for (const { op, signed } of writes) {
          try {
            const value = run(op, signed);
            // A log append that took (value true) is answered after the sync whatever the setting: a published
            // checkpoint must never be lost, or it could be re-signed differently (a fork).
            // A refused consumeSave wrote nothing: answered at once.
            const stored = op.op === 'save' || op.op === 'saveMany' || (op.op === 'consumeSave' && (value as AllowanceReply).allowed);
            if ((stored && syncAfterCommit) || (op.op === 'logAppend' && value === true)) saved.push({ id: op.id, value });
            else out.push({ id: op.id, ok: true, value });
          } catch (e) {
            out.push(failed(op.id, e));
          }
        }
      });
    } catch (e) {
      out = writes.map(({ op }) => failed(op.id, e));
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
  port.postMessage({ flushed: out, batches: taken });
}

port.on('message', (m: WriterMessage) => {
  if (!Array.isArray(m)) {
    // What is queued is committed, synced and answered first; then the connection closes.
    flush();
    closeWal();
    db.close();
    port.postMessage('closed');
    port.close();
    return;
  }
  for (const o of m) queue.push(o);
  received++;
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
});
