/**
 * @module What counts as the store being unavailable (as opposed to a bug): the
 * database cannot be reached, cannot commit (disk full, read-only, I/O error),
 * or its file is gone. Such a fault is a retryable 503 `unavailable` for the
 * caller, never a 500, and readiness reports it until a write succeeds again.
 */
import { ApiError } from '../errors.js';

/** Seconds a client is told to wait before retrying during a store fault. */
const STORE_RETRY_AFTER_SECONDS = 2;

/** Thrown by the stores themselves for faults they detect (e.g. the SQLite file was removed). */
export class StoreFaultError extends Error {
  /** Short operator-facing reason, e.g. `disk full`. */
  readonly reason: string;
  constructor(reason: string) {
    super(`store unavailable: ${reason}`);
    this.name = 'StoreFaultError';
    this.reason = reason;
  }
}

const NODE_NET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ECONNABORTED']);
const PG_CONNECTION_MESSAGES = [
  'connection terminated',
  'timeout exceeded when trying to connect',
  'client has encountered a connection error',
  'connection timeout',
  'query read timeout',
  'the database system is',
  'cannot use a pool after calling end',
];

/**
 * The operator-facing reason when `err` means the store cannot serve right now, else null.
 * Recognises node-postgres connection errors and SQLSTATE classes 08 (connection),
 * 53 (insufficient resources, e.g. disk full), 57P (server shutting down), 58 (system
 * I/O) and 25006 (read-only), SQLite's FULL/IOERR/READONLY/CANTOPEN/BUSY, and errno
 * ENOSPC/EROFS/EIO.
 */
export function storeFaultReason(err: unknown): string | null {
  if (err instanceof StoreFaultError) return err.reason;
  if (!err || typeof err !== 'object') return null;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message.toLowerCase() : '';
  if (code.startsWith('SQLITE_')) {
    if (code === 'SQLITE_FULL') return 'disk full';
    if (code.startsWith('SQLITE_IOERR')) return 'disk I/O error';
    if (code.startsWith('SQLITE_READONLY')) return 'database is read-only';
    if (code.startsWith('SQLITE_CANTOPEN')) return 'database file cannot be opened';
    if (code.startsWith('SQLITE_BUSY')) return 'database is locked';
    return null;
  }
  if (code === 'ENOSPC') return 'disk full';
  if (code === 'EROFS') return 'file system is read-only';
  if (code === 'EIO') return 'disk I/O error';
  if (NODE_NET_CODES.has(code)) return 'database unreachable';
  if (/^[0-9A-Z]{5}$/.test(code)) {
    if (code === '53100') return 'database server disk full';
    if (code.startsWith('08') || code.startsWith('57P')) return 'database unreachable';
    if (code.startsWith('53')) return 'database server out of resources';
    if (code.startsWith('58')) return 'database server I/O error';
    if (code === '25006') return 'database is read-only';
  }
  if (PG_CONNECTION_MESSAGES.some((m) => message.includes(m))) return 'database unreachable';
  if (message === 'the store writer has stopped' || message === 'the store is closed') return 'store closed';
  return null;
}

/** The reason of a write committed whose WAL sync failed: in the database, but not known to be on disk. */
export const DISK_SYNC_FAILED = 'disk sync failed';

/** The coded 503 a caller gets during a store fault (nothing was acknowledged or charged). */
export function storeUnavailableError(reason: string): ApiError {
  // After a failed sync the write is in the database, so "nothing was stored" would not be true.
  const outcome = reason === DISK_SYNC_FAILED ? 'nothing was acknowledged or charged' : 'nothing was stored or charged';
  return new ApiError('unavailable', {
    message: `The database is unavailable (${reason}); ${outcome}. Try again shortly.`,
    retryAfter: STORE_RETRY_AFTER_SECONDS,
  });
}
