/**
 * @module What the embedded SQLite store's main thread and its worker threads (the writer and the
 * checkpointer of sqlite-offload.ts, the log appender of log-sqlite.ts) share: the data each worker
 * starts with, the messages both ways, the histograms a worker counts into shared memory, and how a
 * worker module is found. Both sides import it, so a message can only change on both at once. Kept
 * to types and a few small functions: a worker loads it at start.
 */
import type { KeyObject } from 'node:crypto';
import { closeSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parentPort, type MessagePort } from 'node:worker_threads';
import type { LogAppendBatch } from './log-store.js';
import type { DurationHistogram } from './store.js';

/** The part of the better-sqlite3 API the workers use (the package ships no types). */
export interface WorkerStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
export interface WorkerDatabase {
  prepare(sql: string): WorkerStatement;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) & { immediate(...args: A): R };
  close(): void;
}
type WorkerDatabaseConstructor = new (file: string, options?: { timeout?: number }) => WorkerDatabase;

/**
 * A worker's start: its port to the main thread, and its own connection to the database file, waiting
 * up to `timeoutMs` for another connection's lock.
 */
export function startWorker(name: string, data: SqliteConnectionData, timeoutMs: number): { port: MessagePort; db: WorkerDatabase } {
  if (!parentPort) throw new Error(`${name} runs as a worker thread`);
  const Database = createRequire(import.meta.url)(data.driver) as WorkerDatabaseConstructor;
  const db = new Database(data.file, { timeout: timeoutMs });
  db.pragma('busy_timeout = ' + Math.trunc(timeoutMs));
  return { port: parentPort, db };
}

/** Closes a descriptor a worker keeps open, whatever state it is in (a close that fails leaves nothing to do). */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* already gone */
  }
}

/**
 * How to start the worker module `name` beside this one: its compiled JavaScript, by path; or, running from
 * the TypeScript sources (no .js beside this file), the source through ts-worker.mjs, which registers tsx
 * in the new thread first. Give both fields to `new Worker(filename, { argv, ... })`.
 */
export function workerModule(name: string): { filename: URL; argv: string[] } {
  const js = new URL(`./${name}.js`, import.meta.url);
  if (existsSync(fileURLToPath(js))) return { filename: js, argv: [] };
  return { filename: new URL('./ts-worker.mjs', import.meta.url), argv: [new URL(`./${name}.ts`, import.meta.url).href] };
}

/** A duration's bucket in a histogram: the first upper bound (seconds) it does not exceed, else the last (+Inf). */
export function bucketOf(bounds: readonly number[], seconds: number): number {
  let i = 0;
  while (i < bounds.length && seconds > (bounds[i] as number)) i++;
  return i;
}

/** A duration histogram in shared memory, as handed to the one worker that counts into it. */
export interface SharedHistogramData {
  bounds: readonly number[];
  counts: SharedArrayBuffer;
  sum: SharedArrayBuffer;
}

/**
 * The main thread's side of a histogram a worker counts into: what to hand over, and its reader. No
 * message per observation: the main thread reads the counts when /metrics is scraped.
 */
export function createSharedHistogram(bounds: readonly number[]): { data: SharedHistogramData; read(): DurationHistogram } {
  const counts = new Int32Array(new SharedArrayBuffer(4 * (bounds.length + 1)));
  const sum = new Float64Array(new SharedArrayBuffer(8));
  return {
    data: { bounds, counts: counts.buffer as SharedArrayBuffer, sum: sum.buffer as SharedArrayBuffer },
    read: () => ({ bounds, counts: Array.from(counts, (_, i) => Atomics.load(counts, i)), sum: sum[0] as number }),
  };
}

/** The worker's side of a shared histogram: counts a duration (ms). Only one thread writes each histogram. */
export function sharedHistogramObserver(data: SharedHistogramData): (ms: number) => void {
  const counts = new Int32Array(data.counts);
  const sum = new Float64Array(data.sum);
  return (ms) => {
    Atomics.add(counts, bucketOf(data.bounds, ms / 1000), 1);
    sum[0] += ms / 1000;
  };
}

/** How a worker reaches the database file. */
export interface SqliteConnectionData {
  /** Resolved path of better-sqlite3, as the main connection loaded it. */
  driver: string;
  file: string;
  busyTimeoutMs: number;
}

/** The statements the writer prepares: the main connection's own SQL (sqlite-sql.ts), by name. */
export interface WriterSql {
  consume: string;
  peek: string;
  refund: string;
  insertReceipt: string;
  take: string;
  refundUnits: string;
}

export interface WriterData extends SqliteConnectionData {
  synchronous: 'FULL' | 'NORMAL';
  walLimitBytes: number;
  preallocateWal: boolean;
  sql: WriterSql;
  /** Inode and device of the database file as the main connection opened it (null in memory). */
  identity: { ino: string; dev: string } | null;
  walSyncs: SharedHistogramData;
}

export interface CheckpointerData extends SqliteConnectionData {
  synchronous: 'FULL' | 'NORMAL';
  walLimitBytes: number;
  intervalMs: number;
  /** How long a RESTART checkpoint may wait for readers (ms); also the connection's busy timeout. */
  restartWaitMs: number;
  walRestarts: SharedHistogramData;
}

export type AppenderData = SqliteConnectionData;

/** A receipt row's values, in RECEIPT_COLUMNS order (receiptValues in common.ts). */
export type ReceiptRowValues = unknown[];

/**
 * A receipt to sign on the writer before it is stored: its unsigned JSON text, and the key. The first
 * save for a key carries the key; later ones name it by its id.
 */
export interface SignRequest {
  keyId: number;
  key?: KeyObject;
  unsignedText: string;
}

/** An allowance answer from the writer; `receipt`, the signed text as stored, when the receipt stored with the unit was signed there. */
export interface AllowanceReply {
  allowed: boolean;
  used: number;
  receipt?: string;
}

/** One operation for the writer, as the main thread issues it (the id is added when it is queued). */
export type WriterOpBody =
  | { op: 'consume'; clientKey: string; day: string; limit: number }
  | { op: 'take'; clientKey: string; day: string; limit: number; units: number }
  | { op: 'refund'; clientKey: string; day: string }
  | { op: 'refundUnits'; clientKey: string; day: string; units: number }
  | { op: 'save'; args: ReceiptRowValues; sign?: SignRequest }
  | { op: 'consumeSave'; clientKey: string; day: string; limit: number; args: ReceiptRowValues; sign?: SignRequest }
  | { op: 'saveMany'; rows: ReceiptRowValues[] }
  | { op: 'logAppend'; batch: LogAppendBatch }
  | { op: 'logPending'; limit: number };

export type WriterOp = WriterOpBody & { id: number };

/** To the writer: a batch of operations, or the request to commit what is queued and stop. */
export type WriterMessage = WriterOp[] | { op: 'close' };

/**
 * The answer to one call. `code` carries the driver's error code, or STORE_FILE when the database file is
 * no longer the one the store opened; `committed` when the write was committed but its WAL sync failed.
 */
export type Outcome = { id: number; ok: true; value: unknown } | Failure;
export type Failure = { id: number; ok: false; message: string; code?: string; committed?: true };

/** From the writer: the answers of what it committed, and how many batches it took; or that it stopped. */
export type WriterReply = { flushed: Outcome[]; batches: number } | 'closed';

/** To the checkpointer: a read of the log's queue, or the request to stop. */
export type CheckpointerMessage = { id: number; limit: number } | 'close';
/** From the checkpointer: a queue read's answer (its value a LogPendingReceipt[]), or that it stopped. */
export type CheckpointerReply = Outcome | 'closed';

/** To the log appender: a batch to append, or the request to stop. */
export type AppenderMessage = { id: number; batch: LogAppendBatch } | 'close';
/** From the log appender: whether the batch took (its value a boolean), or that it stopped. */
export type AppenderReply = Outcome | 'closed';

/** The message and code of a thrown value, for an answer that crosses threads. */
export function failed(id: number, e: unknown): Failure {
  const err = e as { message?: unknown; code?: unknown } | null | undefined;
  const code = err && typeof err.code === 'string' ? err.code : undefined;
  return { id, ok: false, message: String((err && err.message) || e), code };
}
