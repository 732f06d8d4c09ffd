/**
 * @module Picks the store from configuration: a postgres:// or postgresql:// URL
 * selects PostgreSQL (stateless instances, any number); anything else is the
 * embedded SQLite file `<dataDir>/verifier.db`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createPostgresStore } from './postgres.js';
import { createSqliteStore } from './sqlite.js';
import { createSqliteOffloadStore } from './sqlite-offload.js';
import { guardStore, type GuardedStore } from './guard.js';
import type { Store } from './store.js';

export type {
  AllowanceState,
  AllowanceStore,
  HistoryEntry,
  KeyStore,
  LogNoteKeyStore,
  PaymentEvent,
  PaymentEventKind,
  PaymentKey,
  PaymentStore,
  PendingSettlement,
  ReceiptRecord,
  ReceiptStore,
  ReputationPage,
  Store,
  StoreMetrics,
  StoreOps,
} from './store.js';
export type { TransparencyLogStore } from './log-store.js';
export { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from './postgres.js';
export { createSqliteStore, type SqliteStore, type SqliteStoreOptions } from './sqlite.js';
export { createSqliteOffloadStore, type SqliteOffloadStoreOptions } from './sqlite-offload.js';
export { guardStore, type GuardedStore, type StoreGuardOptions } from './guard.js';
export { StoreFaultError, storeFaultReason, storeUnavailableError } from './faults.js';

export interface OpenStoreOptions {
  /** A PostgreSQL URL; null/undefined/empty selects SQLite. */
  databaseUrl?: string | null;
  /** Directory for the SQLite file (created when missing). */
  dataDir: string;
  /** PostgreSQL pool size per instance. */
  poolSize?: number;
  /** SQLite only: commit concurrent writes together (see SqliteStoreOptions.groupCommit). */
  groupCommit?: boolean;
  /** SQLite only: FULL (default) or NORMAL (see SqliteStoreOptions.synchronous). */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * SQLite only: `worker` commits the allowance and receipt writes on a worker
   * thread (group commit, no disk sync on the event loop; see sqlite-offload.ts).
   * Default: on the main thread.
   */
  writer?: 'main' | 'worker';
  /** PostgreSQL schema (default `public`). */
  schema?: string;
  /** Told about every store fault (database unreachable, disk full, …), e.g. to log it. */
  onFault?: (reason: string, err: unknown) => void;
}

function isPostgresUrl(url: string | null | undefined): url is string {
  return typeof url === 'string' && /^postgres(ql)?:\/\//i.test(url);
}

/**
 * Whether the store that openStore(options) opens signs receipts on a writer thread of its own (the embedded
 * store with `writer: 'worker'`), deriving each signing input there from the receipt's text; the others sign on
 * the calling thread, where a signing input drafted with the verdict (in a verification worker) saves that walk.
 */
export function signsOnWriterThread(options: Pick<OpenStoreOptions, 'databaseUrl' | 'writer'>): boolean {
  // No database URL: the embedded store.
  return !options.databaseUrl && options.writer === 'worker';
}

/**
 * Opens and migrates the configured store, guarded: its faults are 503 `unavailable`
 * and show in readiness (see guard.ts).
 */
export async function openStore(options: OpenStoreOptions): Promise<Store & GuardedStore> {
  const guard = { onFault: options.onFault };
  if (isPostgresUrl(options.databaseUrl)) {
    return guardStore(await createPostgresStore({ connectionString: options.databaseUrl, poolSize: options.poolSize, schema: options.schema }), guard);
  }
  if (options.databaseUrl) {
    throw new TypeError('database URL must start with postgres:// or postgresql:// (leave it unset for the embedded SQLite store)');
  }
  mkdirSync(options.dataDir, { recursive: true });
  const file = join(options.dataDir, 'verifier.db');
  if (options.writer === 'worker') return guardStore(createSqliteOffloadStore({ file, synchronous: options.synchronous }), guard);
  return guardStore(createSqliteStore({ file, groupCommit: options.groupCommit, synchronous: options.synchronous }), guard);
}
