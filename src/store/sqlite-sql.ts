/**
 * @module The SQL of the SQLite writes that both the main connection
 * (src/store/sqlite.ts) and the offloaded writer thread (src/store/sqlite-offload.ts)
 * prepare. One copy, so the worker can never drift from the store it stands in for.
 */
import { RECEIPT_COLUMNS } from './common.js';

/** The statements shared by the main connection and the writer thread, by name. */
export const SQLITE_WRITE_SQL = {
  /** One statement: the increment and the limit test happen under the same write lock. Params: client_key, day, limit. */
  consume: `INSERT INTO allowance (client_key, day, used) VALUES (?, ?, 1)
       ON CONFLICT (client_key, day) DO UPDATE SET used = used + 1 WHERE used < ?
       RETURNING used`,
  /** N units at once, all or none, in one statement. Params: client_key, day, units, limit (units <= limit checked before). */
  take: `INSERT INTO allowance (client_key, day, used) VALUES (?, ?, ?)
       ON CONFLICT (client_key, day) DO UPDATE SET used = used + excluded.used WHERE used + excluded.used <= ?
       RETURNING used`,
  /** Params: units, client_key, day. Never below zero. */
  refundUnits: 'UPDATE allowance SET used = max(used - ?, 0) WHERE client_key = ? AND day = ?',
  /** Params: client_key, day. */
  peek: 'SELECT used FROM allowance WHERE client_key = ? AND day = ?',
  /** Params: client_key, day. */
  refund: 'UPDATE allowance SET used = used - 1 WHERE client_key = ? AND day = ? AND used > 0',
  /** Params: the values of receiptValues(), in RECEIPT_COLUMNS order. */
  insertReceipt: `INSERT INTO receipts (${RECEIPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
} as const;
