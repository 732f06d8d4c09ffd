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
 * the transaction that stores them, and answers with the signed text it stored: the HTTP
 * thread sends the message anyway, so the signature costs it no hand-over of its own,
 * and it sends those bytes as they are. The threads are the
 * modules sqlite-writer-worker.ts and sqlite-checkpointer-worker.ts; what crosses
 * between them and this thread is typed in sqlite-worker-protocol.ts.
 */
import type { KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { allowanceState, assertDay, assertLimit, assertUnits, receiptValues } from './common.js';
import { createSqliteStore } from './sqlite.js';
import type { LogAppendBatch, LogPendingReceipt } from './log-store.js';
import { SQLITE_WRITE_SQL } from './sqlite-sql.js';
import {
  bucketOf,
  createSharedHistogram,
  workerModule,
  type AllowanceReply,
  type CheckpointerData,
  type CheckpointerMessage,
  type CheckpointerReply,
  type Outcome,
  type ReceiptRowValues,
  type SignRequest,
  type WriterData,
  type WriterMessage,
  type WriterOp,
  type WriterOpBody,
  type WriterReply,
} from './sqlite-worker-protocol.js';
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

/** A call waiting for its answer; a write to the writer thread also records what it writes and when it was issued (writeWaits()). */
type Settle = { resolve(v: unknown): void; reject(e: unknown): void; write?: StoreWrite; issued?: number };

/** Upper bounds (seconds) of the write-wait histograms (writeWaits()): from a commit's fraction of a millisecond to a stalled disk. */
const WRITE_WAIT_BOUNDS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1] as const;

/** What each writer operation writes, for its wait's histogram. */
const WRITE_OF: Readonly<Partial<Record<WriterOpBody['op'], StoreWrite>>> = {
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
    synchronous: options.synchronous === 'NORMAL' ? ('NORMAL' as const) : ('FULL' as const),
    walLimitBytes: options.walLimitBytes ?? WAL_LIMIT_BYTES,
  };
  const identity = base.fileIdentity();
  const walSyncs = createSharedHistogram(WAL_SYNC_BOUNDS);
  const walRestarts = createSharedHistogram(WAL_SYNC_BOUNDS);
  // Both threads' garbage is short-lived and small (messages, rows): V8's default young generation (up to
  // 16 MB of new space each under load) only holds memory. 4 MB cost no measurable CPU and 10-19 MB of peak RSS less.
  const resourceLimits = { maxYoungGenerationSizeMb: 4 };
  const writerModule = workerModule('sqlite-writer-worker');
  const worker = new Worker(writerModule.filename, {
    argv: writerModule.argv,
    resourceLimits,
    workerData: { ...connection, sql: SQLITE_WRITE_SQL, identity, walSyncs: walSyncs.data, preallocateWal: options.preallocateWal !== false } satisfies WriterData,
  });
  // An idle writer must not keep the process alive; pending calls hold their own promises.
  worker.unref();
  // Log-queue reads waiting for the checkpointer; once it has stopped they go to the writer instead.
  const reads = new Map<number, Settle>();
  let nextReadId = 1;
  let readerUp = true;
  const readerDown = () => {
    readerUp = false;
    for (const r of reads.values()) r.reject(new Error('the log queue reader has stopped'));
    reads.clear();
  };
  // The checkpointer starts with the first allowance or receipt write: until then the WAL holds little to copy
  // (a log checkpoint at most) and the log's queue does not change, so an idle server keeps one thread (and
  // its few MiB) fewer, and its queue reads (the log's periodic poll, empty at rest) use the main connection.
  let checkpointer: Worker | null = null;
  let checkpointerClosed: Promise<void> = Promise.resolve();
  const startCheckpointer = (): void => {
    const { filename, argv } = workerModule('sqlite-checkpointer-worker');
    const w = new Worker(filename, {
      argv,
      resourceLimits,
      workerData: { ...connection, intervalMs: 200, restartWaitMs: RESTART_WAIT_MS, walRestarts: walRestarts.data } satisfies CheckpointerData,
    });
    w.unref();
    checkpointerClosed = new Promise<void>((resolve) => {
      w.on('message', (m: CheckpointerReply) => {
        if (m === 'closed') resolve();
        else settle(reads, m);
      });
      const stopped = () => {
        readerDown();
        resolve();
      };
      w.on('exit', stopped);
      // A failed checkpointer only lets the WAL grow until the next start; it never loses a write.
      w.on('error', stopped);
    });
    checkpointer = w;
  };
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
  worker.on('message', (msg: WriterReply) => {
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
  let outbox: WriterOp[] = [];
  let inFlight = 0;
  let scheduled = false;
  const post = () => {
    scheduled = false;
    if (inFlight >= MAX_IN_FLIGHT || outbox.length === 0) return;
    const ops = outbox;
    outbox = [];
    inFlight++;
    worker.postMessage(ops satisfies WriterMessage);
  };
  const call = <T>(body: WriterOpBody): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failure || closing) return reject(failure ?? new Error('the store is closed'));
      if (checkpointer === null && body.op !== 'logAppend' && body.op !== 'logPending') startCheckpointer();
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject, write: WRITE_OF[body.op], issued: performance.now() });
      outbox.push(Object.assign(body, { id }));
      if (inFlight < MAX_IN_FLIGHT && !scheduled) {
        scheduled = true;
        setImmediate(post);
      }
    });

  // A unit taken with its receipt. Committed but not synced: the unit was taken for an answer that will be
  // an error, so it goes back.
  const consumeSave = async (op: Extract<WriterOpBody, { op: 'consumeSave' }>): Promise<AllowanceReply> => {
    try {
      return await call<AllowanceReply>(op);
    } catch (e) {
      if ((e as { committed?: boolean }).committed) await call({ op: 'refund', clientKey: op.clientKey, day: op.day }).catch(() => undefined);
      throw e;
    }
  };

  // Each signing key crosses to the writer once, with the first receipt it signs there; later ones name its id.
  const keyIds = new WeakMap<KeyObject, number>();
  let nextKeyId = 1;
  const signedSave = (record: UnsignedReceiptRecord, key: KeyObject): { args: ReceiptRowValues; sign: SignRequest } => {
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
      const r = await call<AllowanceReply>({ op: 'consume', clientKey, day, limit });
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
      const r = await consumeSave({ op: 'consumeSave', clientKey, day, limit, args: receiptValues(record) });
      return allowanceState(r.allowed, limit, r.used);
    },

    async saveReceipt(record: ReceiptRecord): Promise<void> {
      // The writer answers only once the commit is in a file that is still the database (see fileProblem).
      await call({ op: 'save', args: receiptValues(record) });
    },

    signAndSaveReceipt(record: UnsignedReceiptRecord, key: KeyObject): Promise<string> {
      return call<string>({ op: 'save', ...signedSave(record, key) });
    },

    async consumeAllowanceAndSignAndSaveReceipt(clientKey, day, limit, record, key) {
      assertDay(day);
      assertLimit(limit);
      if (limit === 0) return { ...(await base.peekAllowance(clientKey, day, limit)), receipt: null };
      const r = await consumeSave({ op: 'consumeSave', clientKey, day, limit, ...signedSave(record, key) });
      return { ...allowanceState(r.allowed, limit, r.used), receipt: r.allowed ? (r.receipt as string) : null };
    },

    async takeAllowance(clientKey: string, day: string, limit: number, units: number): Promise<AllowanceState> {
      assertDay(day);
      assertLimit(limit);
      assertUnits(units);
      if (units > limit) return base.peekAllowance(clientKey, day, limit).then((st) => ({ ...st, allowed: false }));
      const r = await call<AllowanceReply>({ op: 'take', clientKey, day, limit, units });
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
      const reader = checkpointer;
      if (reader === null && !closing) return base.logPending(limit);
      if (reader === null || !readerUp || closing) return call<LogPendingReceipt[]>({ op: 'logPending', limit });
      return new Promise<LogPendingReceipt[]>((resolve, reject) => {
        const id = nextReadId++;
        reads.set(id, { resolve: resolve as (v: unknown) => void, reject });
        reader.postMessage({ id, limit } satisfies CheckpointerMessage);
      });
    },

    async health(): Promise<boolean> {
      return failure === null && closing === null && (await base.health());
    },

    async check(): Promise<string | null> {
      if (failure) return 'store writer stopped';
      if (closing) return 'store closed';
      return base.check();
    },

    close(): Promise<void> {
      closing ??= (async () => {
        if (failure === null) {
          // The writer commits what is queued, then stops; callers waiting on those writes resolve first.
          const stopped = new Promise<void>((resolve) => (closedSignal = resolve));
          // Whatever still waits for the batch in flight goes now; the worker takes messages in order.
          const ops = outbox;
          outbox = [];
          if (ops.length > 0) worker.postMessage(ops satisfies WriterMessage);
          worker.postMessage({ op: 'close' } satisfies WriterMessage);
          await stopped;
        }
        await worker.terminate().catch(() => undefined);
        if (checkpointer !== null) {
          checkpointer.postMessage('close' satisfies CheckpointerMessage);
          await checkpointerClosed;
          await checkpointer.terminate().catch(() => undefined);
        }
        await base.close();
      })();
      return closing;
    },
  };
}
